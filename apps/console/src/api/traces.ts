import { ApiError, buildPath, requestJson } from '../lib/api-client.ts';
import { anyTimeToMs } from '../lib/ns-to-ms.ts';
import { toIso, toNsLiteral } from '../lib/time-range.ts';
import { runSql } from './sql.ts';

// Trace search and the hop waterfall. GET /api/traces and /api/traces/:traceId are the contract;
// on a server without those routes the console reads the documented `spans` view through the SQL
// gate instead, so the view works against any Governor that ingests traces.

export interface TraceFilters {
  fromMs: number;
  toMs: number;
  pool?: string | null;
  model?: string | null;
  tenant?: string | null;
  outcome?: string | null;
  minDurationMs?: number | null;
  maxDurationMs?: number | null;
  limit?: number;
}

export interface TraceSummary {
  traceId: string;
  startMs: number;
  durationMs: number | null;
  ttftMs: number | null;
  name: string | null;
  service: string | null;
  pool: string | null;
  model: string | null;
  tenant: string | null;
  outcome: string | null;
  spanCount: number | null;
  taskId: string | null;
}

export interface TraceSearchResult {
  traces: TraceSummary[];
  source: 'api' | 'sql';
  truncated: boolean;
}

export interface SpanEvent {
  name: string;
  timeMs: number | null;
  attributes: Record<string, unknown>;
}

export interface TraceSpan {
  spanId: string;
  parentSpanId: string | null;
  name: string;
  service: string | null;
  hop: string | null;
  startMs: number;
  /** Nanosecond start as text (exact), for display and sorting ties. */
  startNs: string | null;
  durationMs: number;
  statusCode: number | null;
  statusMessage: string | null;
  outcome: string | null;
  attributes: Record<string, unknown>;
  events: SpanEvent[];
}

export interface TraceDetail {
  traceId: string;
  spans: TraceSpan[];
  source: 'api' | 'sql';
}

export async function searchTraces(filters: TraceFilters, signal?: AbortSignal): Promise<TraceSearchResult> {
  const limit = filters.limit ?? 100;
  const path = buildPath('/api/traces', {
    from: toIso(filters.fromMs),
    to: toIso(filters.toMs),
    pool: filters.pool,
    model: filters.model,
    tenant: filters.tenant,
    outcome: filters.outcome,
    minMs: filters.minDurationMs,
    maxMs: filters.maxDurationMs,
    limit,
  });
  try {
    const raw = await requestJson<unknown>(path, signal ? { signal } : {});
    const list = pickList(raw, ['traces', 'items', 'results']);
    return {
      traces: list.map(normalizeTraceSummary),
      source: 'api',
      truncated: Boolean((raw as { truncated?: unknown })?.truncated),
    };
  } catch (error) {
    if (!(error instanceof ApiError && error.isMissingRoute)) throw error;
  }
  return searchTracesWithSql(filters, limit, signal);
}

export async function fetchTrace(traceId: string, signal?: AbortSignal): Promise<TraceDetail> {
  try {
    const raw = await requestJson<unknown>(
      `/api/traces/${encodeURIComponent(traceId)}`,
      signal ? { signal } : {},
    );
    const body = raw as Record<string, unknown>;
    const spans = pickList(body, ['spans']).map(normalizeSpan);
    return { traceId: String(body.traceId ?? traceId), spans, source: 'api' };
  } catch (error) {
    if (!(error instanceof ApiError && error.isMissingRoute)) throw error;
  }
  return fetchTraceWithSql(traceId, signal);
}

function pickList(raw: unknown, keys: string[]): Record<string, unknown>[] {
  if (Array.isArray(raw)) return raw as Record<string, unknown>[];
  const body = (raw ?? {}) as Record<string, unknown>;
  for (const key of keys) if (Array.isArray(body[key])) return body[key] as Record<string, unknown>[];
  return [];
}

function str(value: unknown): string | null {
  return value === null || value === undefined || value === '' ? null : String(value);
}

function num(value: unknown): number | null {
  if (value === null || value === undefined || value === '') return null;
  const n = typeof value === 'number' ? value : Number(value);
  return Number.isFinite(n) ? n : null;
}

const toMs = anyTimeToMs;

function nsText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return String(value);
}

export function normalizeTraceSummary(raw: Record<string, unknown>): TraceSummary {
  return {
    traceId: String(raw.traceId ?? raw.trace_id ?? ''),
    startMs: toMs(raw.startTime ?? raw.start ?? raw.startMs ?? raw.startNs ?? raw.start_ns) ?? 0,
    durationMs: num(raw.durationMs ?? raw.e2eMs ?? raw.duration_ms ?? raw.e2e_ms),
    ttftMs: num(raw.ttftMs ?? raw.ttft_ms),
    name: str(raw.name ?? raw.rootName ?? raw.root_name),
    service: str(raw.service ?? raw.serviceName),
    pool: str(raw.pool),
    model: str(raw.model),
    tenant: str(raw.tenant),
    outcome: str(raw.outcome),
    spanCount: num(raw.spanCount ?? raw.span_count),
    taskId: str(raw.taskId ?? raw.task_id),
  };
}

function parseJsonObject(value: unknown): Record<string, unknown> {
  if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  if (typeof value === 'string' && value.startsWith('{')) {
    try {
      return JSON.parse(value) as Record<string, unknown>;
    } catch {
      return {};
    }
  }
  return {};
}

function parseEvents(value: unknown, traceStartMs: number | null): SpanEvent[] {
  let list: unknown = value;
  if (typeof value === 'string') {
    try {
      list = JSON.parse(value);
    } catch {
      list = [];
    }
  }
  if (!Array.isArray(list)) return [];
  return list.map((e: Record<string, unknown>) => ({
    name: String(e.name ?? 'event'),
    // The waterfall API gives offsets from the trace start; raw spans give absolute times.
    timeMs:
      typeof e.offsetMs === 'number' && traceStartMs !== null
        ? traceStartMs + e.offsetMs
        : toMs(e.timeMs ?? e.time ?? e.timeNs ?? e.time_ns ?? e.timeUnixNano ?? e.timestamp),
    attributes: parseJsonObject(e.attributes),
  }));
}

export function normalizeSpan(raw: Record<string, unknown>): TraceSpan {
  const startRaw = raw.startNs ?? raw.start_ns ?? raw.startTimeUnixNano ?? raw.startTime ?? raw.startMs;
  const startMs = toMs(startRaw) ?? 0;
  const endMs = toMs(raw.endNs ?? raw.end_ns ?? raw.endTime ?? raw.endMs);
  const durationMs = num(raw.durationMs ?? raw.duration_ms) ?? (endMs !== null ? endMs - startMs : 0);
  const traceStartMs = typeof raw.offsetMs === 'number' ? startMs - raw.offsetMs : null;
  const events = parseEvents(raw.events, traceStartMs);
  // The first token is the moment TTFT ends: mark it even when no event carries it.
  if (
    typeof raw.firstTokenOffsetMs === 'number' &&
    traceStartMs !== null &&
    !events.some((e) => /first_(token|chunk)/.test(e.name))
  ) {
    events.push({ name: 'first token', timeMs: traceStartMs + raw.firstTokenOffsetMs, attributes: {} });
  }
  return {
    spanId: String(raw.spanId ?? raw.span_id ?? ''),
    parentSpanId: str(raw.parentSpanId ?? raw.parent_span_id),
    name: String(raw.name ?? ''),
    service: str(raw.service ?? raw.serviceName),
    hop: str(raw.hop),
    startMs,
    startNs: nsText(raw.startNs ?? raw.start_ns),
    durationMs,
    statusCode: num(
      raw.statusCode ?? raw.status_code ?? (raw.status as { code?: unknown } | undefined)?.code,
    ),
    statusMessage: str(
      raw.statusMessage ?? raw.status_message ?? (raw.status as { message?: unknown } | undefined)?.message,
    ),
    outcome: str(raw.outcome),
    attributes: parseJsonObject(raw.attributes),
    events,
  };
}

export function quoteSql(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

async function searchTracesWithSql(
  filters: TraceFilters,
  limit: number,
  signal?: AbortSignal,
): Promise<TraceSearchResult> {
  const having: string[] = [];
  if (filters.pool) having.push(`bool_or(pool = ${quoteSql(filters.pool)})`);
  if (filters.model) having.push(`bool_or(model = ${quoteSql(filters.model)})`);
  if (filters.tenant) having.push(`bool_or(tenant = ${quoteSql(filters.tenant)})`);
  if (filters.outcome)
    having.push(
      `coalesce(any_value(outcome) FILTER (WHERE is_root), any_value(outcome)) = ${quoteSql(filters.outcome)}`,
    );
  const duration = '(max(end_ns) - min(start_ns)) / 1e6';
  if (filters.minDurationMs != null) having.push(`${duration} >= ${Number(filters.minDurationMs)}`);
  if (filters.maxDurationMs != null) having.push(`${duration} <= ${Number(filters.maxDurationMs)}`);
  const sql = `SELECT trace_id,
  min(start_ns) AS start_ns,
  ${duration} AS duration_ms,
  max(ttft_ms) AS ttft_ms,
  coalesce(any_value(name) FILTER (WHERE is_root), min(name)) AS name,
  coalesce(any_value(service) FILTER (WHERE is_root), min(service)) AS service,
  max(pool) AS pool, max(model) AS model, max(tenant) AS tenant,
  coalesce(any_value(outcome) FILTER (WHERE is_root), max(outcome)) AS outcome,
  count(*) AS span_count, min(task_id) AS task_id
FROM spans
WHERE start_ns >= ${toNsLiteral(filters.fromMs)} AND start_ns < ${toNsLiteral(filters.toMs)}
GROUP BY trace_id
${having.length ? `HAVING ${having.join(' AND ')}` : ''}
ORDER BY start_ns DESC`;
  const result = await runSql(sql, { limit, ...(signal ? { signal } : {}) });
  const names = result.columns.map((c) => c.name);
  const traces = result.rows.map((row) =>
    normalizeTraceSummary(Object.fromEntries(names.map((n, i) => [n, row[i]]))),
  );
  return { traces, source: 'sql', truncated: result.truncated };
}

async function fetchTraceWithSql(traceId: string, signal?: AbortSignal): Promise<TraceDetail> {
  const sql = `SELECT span_id, parent_span_id, name, service, hop, CAST(start_ns AS VARCHAR) AS start_ns,
  duration_ms, status_code, status_message, outcome, attributes, events
FROM spans WHERE trace_id = ${quoteSql(traceId)} ORDER BY start_ns`;
  const result = await runSql(sql, { limit: 5000, ...(signal ? { signal } : {}) });
  const names = result.columns.map((c) => c.name);
  const spans = result.rows.map((row) => normalizeSpan(Object.fromEntries(names.map((n, i) => [n, row[i]]))));
  if (spans.length === 0) {
    throw new ApiError(404, 'GOV_ERR_NOT_FOUND', `no spans for trace ${traceId}`, '/api/sql');
  }
  return { traceId, spans, source: 'sql' };
}
