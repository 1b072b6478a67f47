import type { GovernorConfig } from '@governor/conventions';
import { nsToRfc3339 } from '../format-duration.ts';
import { loadSql } from '../load-sql.ts';
import { buildWindowParams, configPoolsJson } from '../snapshot/window-params.ts';
import { pickSqlParams, toBigIntOrNull, toNumberOrNull } from '../sql-params.ts';
import { HOP_KEYS, type HopKey } from '../signal-group.ts';
import type { SqlReader } from '../sql-reader.ts';
import { clickHouseConfigParams } from '../snapshot/clickhouse-window-queries.ts';

const LIST_SQL = loadSql(import.meta.url, 'list-traces.sql');
const SPANS_SQL = loadSql(import.meta.url, 'trace-spans.sql');
const REQUEST_SQL = loadSql(import.meta.url, 'trace-request.sql');
const CLICKHOUSE = {
  list: loadSql(import.meta.url, 'list-traces.clickhouse.sql'),
  spans: loadSql(import.meta.url, 'trace-spans.clickhouse.sql'),
  request: loadSql(import.meta.url, 'trace-request.clickhouse.sql'),
};
const INT64_MAX = 0x7fffffffffffffffn;

export interface TraceSearch {
  fromNs?: bigint;
  toNs?: bigint;
  pool?: string;
  model?: string;
  region?: string;
  gpuType?: string;
  tenant?: string;
  priority?: string;
  workflowType?: string;
  outcome?: string;
  taskId?: string;
  /** End-to-end latency bounds, ms. */
  minMs?: number;
  maxMs?: number;
  limit: number;
}

export interface TraceSummary {
  traceId: string;
  name: string;
  service: string | null;
  hasRoot: boolean;
  start: string;
  startNs: string;
  endNs: string;
  e2eMs: number;
  ttftMs: number | null;
  serverTtftMs: number | null;
  pool: string | null;
  model: string | null;
  region: string | null;
  gpuType: string | null;
  replica: string | null;
  tenant: string | null;
  priority: number | null;
  workflowType: string | null;
  taskId: string;
  workflowId: string | null;
  conversationId: string | null;
  workflowStep: number | null;
  workflowSteps: number | null;
  attempt: number;
  finalAttempt: boolean;
  outcome: string;
  errorType: string | null;
  preempted: boolean;
  inputTokens: number | null;
  outputTokens: number | null;
  cachedTokens: number | null;
  cacheHit: boolean | null;
  costUsd: number | null;
  spanCount: number;
  /** Time in each hop, ms (absent hop: not listed). */
  hops: Partial<Record<HopKey, number>>;
}

export interface WaterfallSpan {
  spanId: string;
  parentSpanId: string | null;
  name: string;
  service: string | null;
  hop: string | null;
  kind: number;
  /** Depth in the span tree: 0 for the root (and for spans whose parent never arrived). */
  depth: number;
  /** Start relative to the root's start, ms (negative when the span's clock runs behind). */
  offsetMs: number;
  durationMs: number;
  startNs: string;
  endNs: string;
  status: { code: number; message: string | null };
  outcome: string;
  isRoot: boolean;
  pool: string | null;
  model: string | null;
  replica: string | null;
  firstTokenOffsetMs: number | null;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
  events: { name: string; offsetMs: number | null; attributes: Record<string, unknown> }[];
}

export interface TraceWaterfall {
  traceId: string;
  /** The request's summary (null while request_facts has no row for it). */
  request: TraceSummary | null;
  start: string;
  startNs: string;
  /** Spans in tree order (a parent before its children, siblings by start time). */
  spans: WaterfallSpan[];
}

type Row = Record<string, unknown>;

export async function searchTraces(
  db: SqlReader,
  config: GovernorConfig,
  search: TraceSearch,
): Promise<TraceSummary[]> {
  const params = {
    ...buildWindowParams(
      {
        fromNs: search.fromNs ?? 0n,
        toNs: search.toNs ?? INT64_MAX,
        stepNs: 1n,
        by: [],
        filter: {
          ...(search.pool === undefined ? {} : { pool: search.pool }),
          ...(search.model === undefined ? {} : { model: search.model }),
          ...(search.region === undefined ? {} : { region: search.region }),
          ...(search.gpuType === undefined ? {} : { gpu_type: search.gpuType }),
          ...(search.tenant === undefined ? {} : { tenant: search.tenant }),
          ...(search.priority === undefined ? {} : { priority: search.priority }),
          ...(search.workflowType === undefined ? {} : { workflow_type: search.workflowType }),
        },
        pendingAfterNs: 0n,
      },
      config,
    ),
    // Every request shows the model, region and GPU type its pool's config gives it.
    pools_json: configPoolsJson(config.pools),
    f_outcome: search.outcome ?? null,
    f_task_id: search.taskId ?? null,
    min_ms: search.minMs ?? null,
    max_ms: search.maxMs ?? null,
    limit: search.limit,
  };
  const rows =
    db.engine === 'clickhouse'
      ? await db.query<Row>(CLICKHOUSE.list, { ...params, ...clickHouseConfigParams(config) })
      : await db.query<Row>(LIST_SQL, pickSqlParams(LIST_SQL, params));
  return rows.map(toTraceSummary);
}

export async function readTraceWaterfall(
  db: SqlReader,
  config: GovernorConfig,
  traceId: string,
): Promise<TraceWaterfall | null> {
  const id = traceId.toLowerCase();
  const clickhouse = db.engine === 'clickhouse';
  const [fact] = await db.query<Row>(clickhouse ? CLICKHOUSE.request : REQUEST_SQL, { trace_id: id });
  const lo = toBigIntOrNull(fact?.first_span_ns) ?? 0n;
  const hi = toBigIntOrNull(fact?.last_span_ns) ?? INT64_MAX;
  const rows = await db.query<Row>(clickhouse ? CLICKHOUSE.spans : SPANS_SQL, {
    trace_id: id,
    lo_ns: lo,
    hi_ns: hi,
  });
  if (rows.length === 0) return null;
  let request: TraceSummary | null = null;
  if (fact) {
    const pool = typeof fact.pool === 'string' ? config.pools.find((p) => p.name === fact.pool) : undefined;
    request = toTraceSummary({
      ...fact,
      model: fact.model ?? pool?.model ?? null,
      region: fact.region ?? pool?.region ?? null,
      gpu_type: fact.gpu_type ?? pool?.gpu_type ?? null,
    });
  }
  return buildWaterfall(id, rows, request);
}

function buildWaterfall(traceId: string, rows: readonly Row[], request: TraceSummary | null): TraceWaterfall {
  const spans = rows.map((r) => ({
    row: r,
    id: String(r.span_id),
    parent: typeof r.parent_span_id === 'string' ? r.parent_span_id : null,
  }));
  const ids = new Set(spans.map((s) => s.id));
  const root =
    spans.find((s) => s.row.is_root === true) ??
    spans.find((s) => s.parent === null || !ids.has(s.parent)) ??
    spans[0]!;
  const rootStart = toBigIntOrNull(root.row.start_ns) ?? 0n;
  const children = new Map<string | null, typeof spans>();
  for (const s of spans) {
    const key = s.parent !== null && ids.has(s.parent) && s.id !== root.id ? s.parent : null;
    const list = children.get(key) ?? [];
    list.push(s);
    children.set(key, list);
  }
  const ordered: WaterfallSpan[] = [];
  const visit = (s: (typeof spans)[number], depth: number, seen: Set<string>) => {
    if (seen.has(s.id)) return;
    seen.add(s.id);
    ordered.push(toWaterfallSpan(s.row, depth, rootStart));
    for (const child of children.get(s.id) ?? []) visit(child, depth + 1, seen);
  };
  const seen = new Set<string>();
  // The root first, then spans whose parent never arrived, each with its subtree.
  visit(root, 0, seen);
  for (const orphan of children.get(null) ?? []) visit(orphan, 0, seen);
  // Spans in a parent cycle (malformed data) are still shown.
  for (const s of spans) visit(s, 0, seen);
  return { traceId, request, start: nsToRfc3339(rootStart), startNs: rootStart.toString(), spans: ordered };
}

function toWaterfallSpan(r: Row, depth: number, rootStart: bigint): WaterfallSpan {
  const start = toBigIntOrNull(r.start_ns) ?? 0n;
  const end = toBigIntOrNull(r.end_ns) ?? start;
  const firstToken = toBigIntOrNull(r.first_token_ns);
  const offset = (ns: bigint) => Number(ns - rootStart) / 1e6;
  const events = parseJson<unknown[]>(r.events, []).map((e) => {
    const event = (e ?? {}) as { name?: unknown; timeNs?: unknown; attributes?: unknown };
    const at = toBigIntOrNull(event.timeNs);
    return {
      name: String(event.name ?? ''),
      offsetMs: at === null ? null : offset(at),
      attributes: (event.attributes ?? {}) as Record<string, unknown>,
    };
  });
  return {
    spanId: String(r.span_id),
    parentSpanId: typeof r.parent_span_id === 'string' ? r.parent_span_id : null,
    name: String(r.name),
    service: typeof r.service === 'string' ? r.service : null,
    hop: typeof r.hop === 'string' ? r.hop : null,
    kind: toNumberOrNull(r.kind) ?? 0,
    depth,
    offsetMs: offset(start),
    durationMs: Number(end - start) / 1e6,
    startNs: start.toString(),
    endNs: end.toString(),
    status: {
      code: toNumberOrNull(r.status_code) ?? 0,
      message: typeof r.status_message === 'string' ? r.status_message : null,
    },
    outcome: String(r.outcome),
    isRoot: r.is_root === true,
    pool: typeof r.pool === 'string' ? r.pool : null,
    model: typeof r.model === 'string' ? r.model : null,
    replica: typeof r.replica === 'string' ? r.replica : null,
    firstTokenOffsetMs: firstToken === null ? null : offset(firstToken),
    attributes: parseJson<Record<string, unknown>>(r.attributes, {}),
    resource: parseJson<Record<string, unknown>>(r.resource, {}),
    events,
  };
}

export function toTraceSummary(r: Row): TraceSummary {
  const start = toBigIntOrNull(r.start_ns) ?? 0n;
  const hops: Partial<Record<HopKey, number>> = {};
  for (const hop of HOP_KEYS) {
    const v = toNumberOrNull(r[`hop_${hop}_ms`]);
    if (v !== null) hops[hop] = v;
  }
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  return {
    traceId: String(r.trace_id),
    name: String(r.name),
    service: str(r.service),
    hasRoot: r.has_root === true,
    start: nsToRfc3339(start),
    startNs: start.toString(),
    endNs: (toBigIntOrNull(r.end_ns) ?? start).toString(),
    e2eMs: toNumberOrNull(r.e2e_ms) ?? 0,
    ttftMs: toNumberOrNull(r.ttft_ms),
    serverTtftMs: toNumberOrNull(r.server_ttft_ms),
    pool: str(r.pool),
    model: str(r.model),
    region: str(r.region),
    gpuType: str(r.gpu_type),
    replica: str(r.replica),
    tenant: str(r.tenant),
    priority: toNumberOrNull(r.priority),
    workflowType: str(r.workflow_type),
    taskId: String(r.task_id),
    workflowId: str(r.workflow_id),
    conversationId: str(r.conversation_id),
    workflowStep: toNumberOrNull(r.workflow_step),
    workflowSteps: toNumberOrNull(r.workflow_steps),
    attempt: toNumberOrNull(r.attempt) ?? 1,
    finalAttempt: r.is_final_attempt === true,
    outcome: String(r.outcome),
    errorType: str(r.error_type),
    preempted: r.preempted === true,
    inputTokens: toNumberOrNull(r.input_tokens),
    outputTokens: toNumberOrNull(r.output_tokens),
    cachedTokens: toNumberOrNull(r.cached_tokens),
    cacheHit: typeof r.cache_hit === 'boolean' ? r.cache_hit : null,
    costUsd: toNumberOrNull(r.cost_usd),
    spanCount: toNumberOrNull(r.span_count) ?? 0,
    hops,
  };
}

function parseJson<T>(value: unknown, fallback: T): T {
  if (typeof value !== 'string' || value === '') return (value ?? fallback) as T;
  try {
    return JSON.parse(value) as T;
  } catch {
    return fallback;
  }
}
