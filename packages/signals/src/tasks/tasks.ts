import type { GovernorConfig, GroupDimension } from '@governor/conventions';
import { nsToRfc3339 } from '../format-duration.ts';
import { loadSql } from '../load-sql.ts';
import { type PoolBucket, computePoolBuckets, shareOfPool } from '../snapshot/pool-costs.ts';
import { buildWindowParams, configPoolsJson } from '../snapshot/window-params.ts';
import { runPoolQueries } from '../snapshot/window-rows.ts';
import { windowQueriesFor } from '../snapshot/window-queries-for.ts';
import { clickHouseConfigParams } from '../snapshot/clickhouse-window-queries.ts';
import type { SqlReader } from '../sql-reader.ts';
import { pickSqlParams, toBigIntOrNull, toNumberOrNull } from '../sql-params.ts';

const LIST_SQL = loadSql(import.meta.url, 'list-tasks.sql');
const LIST_SQL_CLICKHOUSE = loadSql(import.meta.url, 'list-tasks.clickhouse.sql');

export const TASK_STATUSES = ['success', 'failed', 'abandoned', 'pending'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export interface TaskSearch {
  fromNs: bigint;
  toNs: bigint;
  filter: Partial<Record<GroupDimension, string>>;
  status?: TaskStatus;
  limit: number;
  /** Incomplete tasks that ended after this are pending (newest event − lateness). */
  pendingAfterNs: bigint;
}

export interface TaskAttempt {
  traceId: string;
  step: number | null;
  attempt: number;
  final: boolean;
  outcome: string;
  errorType: string | null;
  start: string;
  e2eMs: number;
  ttftMs: number | null;
  pool: string | null;
  model: string | null;
  /** This request's share of its pool's cost over the listed range (see TaskSummary.costUsd). */
  costUsd: number | null;
}

export interface TaskSummary {
  taskId: string;
  workflowId: string | null;
  conversationId: string | null;
  workflowType: string | null;
  tenant: string | null;
  priority: number | null;
  /** Dimensions of the task's last request. */
  pool: string | null;
  model: string | null;
  region: string | null;
  gpuType: string | null;
  start: string;
  end: string;
  e2eMs: number;
  status: TaskStatus;
  /** Succeeded within the SLO on every final attempt; null while pending. */
  goodput: boolean | null;
  requests: number;
  retries: number;
  steps: number;
  declaredSteps: number | null;
  /**
   * The task's share of fleet cost: each request's share (GPU time, else tokens, else one request)
   * of its pool's replica cost over the listed range (first listed task start → `to`), or its
   * explicit governor.cost.usd in pools without a replica-based cost.
   */
  costUsd: number | null;
  attempts: TaskAttempt[];
}

type Row = Record<string, unknown>;

export async function searchTasks(
  db: SqlReader,
  config: GovernorConfig,
  search: TaskSearch,
): Promise<TaskSummary[]> {
  const base = buildWindowParams(
    {
      fromNs: search.fromNs,
      toNs: search.toNs,
      stepNs: search.toNs - search.fromNs,
      by: [],
      filter: search.filter,
      pendingAfterNs: search.pendingAfterNs,
    },
    config,
  );
  const params = {
    ...base,
    // Every task shows the model, region and GPU type its pool's config gives it.
    pools_json: configPoolsJson(config.pools),
    f_status: search.status ?? null,
    limit: search.limit,
  };
  const rows =
    db.engine === 'clickhouse'
      ? await db.query<Row>(LIST_SQL_CLICKHOUSE, { ...params, ...clickHouseConfigParams(config) })
      : await db.query<Row>(LIST_SQL, pickSqlParams(LIST_SQL, params));
  if (rows.length === 0) return [];
  const pools = await poolCostsOver(db, config, rows, search);
  const tasks = new Map<string, Row[]>();
  for (const row of rows) {
    // A task that went idle and resumed is two tasks with one id (signals.task_idle_ms).
    const id = `${String(row.task_id)} ${String(row.task_start_ns)}`;
    const list = tasks.get(id) ?? [];
    list.push(row);
    tasks.set(id, list);
  }
  return [...tasks.values()].map((list) => toTaskSummary(list, pools, config));
}

/** Pool cost over [first listed task start, to] as one bucket, for the requests' cost shares. */
async function poolCostsOver(
  db: SqlReader,
  config: GovernorConfig,
  rows: readonly Row[],
  search: TaskSearch,
): Promise<Map<string | null, PoolBucket>> {
  // bigint: Math.min does not apply.
  let earliest = search.fromNs;
  for (const r of rows) {
    const start = toBigIntOrNull(r.task_start_ns);
    if (start !== null && start < earliest) earliest = start;
  }
  const fromNs = earliest - 1n;
  const spec = {
    fromNs,
    toNs: search.toNs,
    stepNs: search.toNs - fromNs,
    by: [],
    filter: {},
    pendingAfterNs: search.pendingAfterNs,
  };
  const params = buildWindowParams(spec, config);
  const poolRows = await runPoolQueries(windowQueriesFor(db, params, config), params, config);
  const seconds = Number(search.toNs - fromNs) / 1e9;
  const buckets = computePoolBuckets(poolRows, () => seconds, config, new Map());
  return new Map(buckets.map((b) => [b.pool, b]));
}

function toTaskSummary(
  rows: readonly Row[],
  pools: Map<string | null, PoolBucket>,
  config: GovernorConfig,
): TaskSummary {
  const last = rows.find((r) => r.is_task_last === true) ?? rows.at(-1)!;
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  const attempts: TaskAttempt[] = rows.map((r) => {
    const pool = pools.get(str(r.pool));
    let costUsd: number | null = toNumberOrNull(r.cost_usd);
    if (pool && pool.pool !== null && pool.replicaCostUsd !== null) {
      costUsd =
        pool.replicaCostUsd *
        shareOfPool(pool, {
          gpuMs: toNumberOrNull(r.gpu_ms),
          tokens: (toNumberOrNull(r.input_tokens) ?? 0) + (toNumberOrNull(r.output_tokens) ?? 0),
          requests: 1,
        });
    }
    return {
      traceId: String(r.trace_id),
      step: toNumberOrNull(r.workflow_step),
      attempt: toNumberOrNull(r.attempt) ?? 1,
      final: r.is_final_attempt === true,
      outcome: String(r.outcome),
      errorType: str(r.error_type),
      start: nsToRfc3339(toBigIntOrNull(r.start_ns) ?? 0n),
      e2eMs: toNumberOrNull(r.e2e_ms) ?? 0,
      ttftMs: toNumberOrNull(r.ttft_ms),
      pool: str(r.pool),
      model: str(r.model),
      costUsd,
    };
  });
  const status = String(last.status) as TaskStatus;
  const maxTtft = toNumberOrNull(last.task_final_max_ttft_ms);
  const maxE2e = toNumberOrNull(last.task_final_max_e2e_ms);
  const inSlo =
    (config.slo.ttft_ms === undefined || maxTtft === null || maxTtft <= config.slo.ttft_ms) &&
    (config.slo.e2e_ms === undefined || maxE2e === null || maxE2e <= config.slo.e2e_ms);
  const startNs = toBigIntOrNull(last.task_start_ns) ?? 0n;
  const endNs = toBigIntOrNull(last.task_end_ns) ?? startNs;
  const costs = attempts.map((a) => a.costUsd).filter((c): c is number => c !== null);
  return {
    taskId: String(last.task_id),
    workflowId: str(last.workflow_id),
    conversationId: str(last.conversation_id),
    workflowType: str(last.workflow_type),
    tenant: str(last.tenant),
    priority: toNumberOrNull(last.priority),
    pool: str(last.pool),
    model: str(last.model),
    region: str(last.region),
    gpuType: str(last.gpu_type),
    start: nsToRfc3339(startNs),
    end: nsToRfc3339(endNs),
    e2eMs: Number(endNs - startNs) / 1e6,
    status,
    goodput: status === 'pending' ? null : status === 'success' && inSlo,
    requests: toNumberOrNull(last.task_requests) ?? rows.length,
    retries: rows.filter((r) => (toNumberOrNull(r.attempt) ?? 1) > 1).length,
    steps: toNumberOrNull(last.task_steps) ?? 0,
    declaredSteps: toNumberOrNull(last.task_declared_steps),
    costUsd: costs.length === 0 ? null : costs.reduce((a, b) => a + b, 0),
    attempts,
  };
}
