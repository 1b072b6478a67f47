import type { Percentiles } from '@governor/conventions';
import { loadSql } from '../load-sql.ts';
import type { SignalGroupDetail } from '../signal-group.ts';
import type { SqlReader } from '../sql-reader.ts';
import { toNumberOrNull } from '../sql-params.ts';
import { runtimeIncreases } from './runtime-increases.ts';

// A pool whose requests are not traced (tracing off, or its spans never reach Governor) still
// counts requests, failures, tokens and latency histograms in its runtime's own metrics. A snapshot
// by pool fills such a pool's request figures from those counters instead of leaving them empty,
// and says so (`source: 'runtime_metrics'`).

const SQL = loadSql(import.meta.url, 'runtime-metrics.sql');
const CLICKHOUSE_POINTS_SQL = loadSql(import.meta.url, 'runtime-points.clickhouse.sql');

export interface RuntimeCounts {
  requests: number;
  failed: number;
  generatedTokens: number | null;
  ttftMs: Percentiles | null;
  e2eMs: Percentiles | null;
}

/** vLLM's finish reasons that end a request without its answer. */
const FAILED_REASONS = new Set(['abort', 'error']);

export async function readRuntimeCounts(
  db: SqlReader,
  params: { from_ns: bigint; to_ns: bigint; stale_ns: bigint },
): Promise<Map<string, RuntimeCounts>> {
  const rows: Record<string, unknown>[] =
    db.engine === 'clickhouse'
      ? runtimeIncreases(await db.query(CLICKHOUSE_POINTS_SQL, params), params.from_ns)
      : await db.query<Record<string, unknown>>(SQL, params);
  const out = new Map<string, RuntimeCounts>();
  const entry = (pool: string) => {
    let e = out.get(pool);
    if (!e) {
      e = { requests: 0, failed: 0, generatedTokens: null, ttftMs: null, e2eMs: null };
      out.set(pool, e);
    }
    return e;
  };
  for (const row of rows) {
    if (typeof row.pool !== 'string') continue;
    const e = entry(row.pool);
    const n = toNumberOrNull(row.n) ?? 0;
    switch (row.name) {
      case 'vllm:request_success_total':
        e.requests += n;
        if (typeof row.reason === 'string' && FAILED_REASONS.has(row.reason)) e.failed += n;
        break;
      case 'sglang:num_requests_total':
        e.requests += n;
        break;
      case 'sglang:num_aborted_requests_total':
        e.failed += n;
        break;
      case 'vllm:generation_tokens_total':
      case 'sglang:generation_tokens_total':
        e.generatedTokens = (e.generatedTokens ?? 0) + n;
        break;
      case 'vllm:time_to_first_token_seconds':
      case 'sglang:time_to_first_token_seconds':
        e.ttftMs = histogramPercentiles(row.bounds, row.counts);
        break;
      case 'vllm:e2e_request_latency_seconds':
      case 'sglang:e2e_request_latency_seconds':
        e.e2eMs = histogramPercentiles(row.bounds, row.counts);
        break;
    }
  }
  for (const [pool, e] of out) if (e.requests <= 0 && e.ttftMs === null && e.e2eMs === null) out.delete(pool);
  return out;
}

function histogramPercentiles(bounds: unknown, counts: unknown): Percentiles | null {
  if (!Array.isArray(bounds) || !Array.isArray(counts)) return null;
  const b = bounds.map(Number);
  const c = counts.map((v) => Math.max(0, Number(v) || 0));
  const q = (p: number) => {
    const s = histogramQuantile(b, c, p);
    return s === null ? null : s * 1000;
  };
  const p50 = q(0.5);
  return p50 === null ? null : { p50, p95: q(0.95), p99: q(0.99) };
}

/**
 * Prometheus' histogram_quantile over one histogram's bucket counts (OTLP: count per bucket, the
 * last one above the last bound): linear interpolation inside the bucket that holds the rank, the
 * first bucket starting at 0; a rank in the open-ended bucket reads as the last bound.
 */
export function histogramQuantile(
  bounds: readonly number[],
  counts: readonly number[],
  q: number,
): number | null {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total <= 0 || bounds.length === 0) return null;
  const rank = q * total;
  let below = 0;
  for (let i = 0; i < counts.length; i++) {
    const n = counts[i]!;
    if (below + n >= rank && n > 0) {
      if (i >= bounds.length) return bounds[bounds.length - 1]!;
      const lower = i === 0 ? 0 : bounds[i - 1]!;
      return lower + ((bounds[i]! - lower) * (rank - below)) / n;
    }
    below += n;
  }
  return bounds[bounds.length - 1]!;
}

/** A pool group without traced requests, filled from its runtime's counters over `seconds`. */
export function fillFromRuntimeCounts(
  group: SignalGroupDetail,
  counts: RuntimeCounts,
  seconds: number,
): SignalGroupDetail {
  const requests = Math.round(counts.requests);
  const successful = Math.max(0, requests - Math.round(counts.failed));
  const tokensPerS =
    counts.generatedTokens === null || seconds <= 0 ? null : counts.generatedTokens / seconds;
  const peak = group.peakTokensPerSPerReplica;
  const computeUtil =
    tokensPerS !== null && group.replicas !== null && group.replicas > 0 && peak !== null && peak > 0
      ? tokensPerS / group.replicas / peak
      : group.computeUtil;
  const cost = group.costUsd;
  return {
    ...group,
    requests,
    ttftMs: counts.ttftMs ?? group.ttftMs,
    serverTtftMs: counts.ttftMs ?? group.serverTtftMs,
    e2eMs: counts.e2eMs ?? group.e2eMs,
    errorRate: requests > 0 ? (requests - successful) / requests : null,
    tasks: requests,
    successfulTasks: successful,
    successPerDollar: cost !== null && cost > 0 ? successful / cost : null,
    costPerSuccessfulTaskUsd: cost !== null && successful > 0 ? cost / successful : null,
    tokensPerS: tokensPerS ?? group.tokensPerS,
    computeUtil,
    utilizationRatio:
      group.memoryUtil !== null && computeUtil !== null && computeUtil > 0
        ? group.memoryUtil / computeUtil
        : group.utilizationRatio,
    source: 'runtime_metrics',
  };
}
