import type { GovernorConfig } from '@governor/conventions';
import { toNumberOrNull } from '../sql-params.ts';
import type { Row } from './window-rows.ts';

export type AllocationBasis = 'gpu_time' | 'tokens' | 'requests';

/** One pool in one bucket: capacity, cost and what it served. `pool` null = requests without a pool. */
export interface PoolBucket {
  bucket: number;
  pool: string | null;
  model: string | null;
  region: string | null;
  gpuType: string | null;
  requests: number;
  gpuMs: number | null;
  tokens: number;
  outputTokens: number | null;
  explicitCostUsd: number | null;
  /**
   * Replicas as an operator reads them: the gauge's time-weighted mean over the part of the bucket
   * the gauge covers (else the distinct replicas seen in spans).
   */
  replicas: number | null;
  /** Replica-seconds ÷ the whole bucket: the capacity the bucket's traffic had (for utilization). */
  meanReplicas: number | null;
  replicaSeconds: number | null;
  gpusPerReplica: number;
  gpuHourUsd: number | null;
  /** replica-seconds × GPUs per replica × $/GPU-hour ÷ 3600; null without replicas or a price. */
  replicaCostUsd: number | null;
  /** The pool's cost: replica-based when known, else the explicit governor.cost.usd of its spans. */
  costUsd: number | null;
  basis: AllocationBasis | null;
  basisTotal: number;
  kvUsage: number | null;
  queueDepth: number | null;
  tokensPerS: number | null;
  peakTokensPerS: number | null;
  computeUtil: number | null;
}

/** Pool rows of one window query result, with cost and utilization derived (docs/sql.md). */
export function computePoolBuckets(
  rows: readonly Row[],
  bucketSeconds: (bucket: number) => number,
  config: GovernorConfig,
  learnedPeaks: ReadonlyMap<string, number>,
): PoolBucket[] {
  return rows.map((row) => {
    const bucket = toNumberOrNull(row.bucket) ?? 0;
    const seconds = bucketSeconds(bucket);
    const pool = typeof row.pool === 'string' ? row.pool : null;
    const gpuType = typeof row.gpu_type === 'string' ? row.gpu_type : null;
    const replicaNs = toNumberOrNull(row.replica_ns);
    const spanReplicas = toNumberOrNull(row.span_replicas) ?? 0;
    const replicaSeconds =
      pool === null
        ? null
        : replicaNs !== null
          ? replicaNs / 1e9
          : spanReplicas > 0
            ? spanReplicas * seconds
            : null;
    const meanReplicas = replicaSeconds === null || seconds <= 0 ? null : replicaSeconds / seconds;
    // Over the covered span, not the bucket: a pool that reported for only part of the window (it
    // started late, or its gauge went stale) ran its real replica count while it ran, and the
    // whole-window mean would read as a fraction of it. Time-weighted rather than the latest value
    // because every other figure of a snapshot is a window aggregate, a single scrape cannot make it
    // jump, and replicas × covered time × GPUs × $/GPU-hour stays the pool's cost.
    const coveredNs = toNumberOrNull(row.covered_ns);
    const replicas =
      pool === null
        ? null
        : replicaNs !== null
          ? coveredNs !== null && coveredNs > 0
            ? replicaNs / coveredNs
            : meanReplicas
          : spanReplicas > 0
            ? spanReplicas
            : null;
    const gpusPerReplica = toNumberOrNull(row.gpus_per_replica) ?? 1;
    const gpuHourUsd = priceFor(gpuType, config);
    const replicaCostUsd =
      replicaSeconds === null || gpuHourUsd === null
        ? null
        : (replicaSeconds * gpusPerReplica * gpuHourUsd) / 3600;
    const explicitCostUsd = toNumberOrNull(row.explicit_cost_usd);
    const requests = toNumberOrNull(row.requests) ?? 0;
    const gpuMs = toNumberOrNull(row.gpu_ms);
    const tokens = toNumberOrNull(row.tokens) ?? 0;
    const basis: AllocationBasis | null =
      gpuMs !== null && gpuMs > 0 ? 'gpu_time' : tokens > 0 ? 'tokens' : requests > 0 ? 'requests' : null;
    const basisTotal = basis === 'gpu_time' ? gpuMs! : basis === 'tokens' ? tokens : requests;
    const outputTokens = toNumberOrNull(row.output_tokens);
    const tokensPerS = outputTokens === null || seconds <= 0 ? null : outputTokens / seconds;
    const peakTokensPerS =
      toNumberOrNull(row.peak_tokens_per_s) ?? (pool === null ? null : (learnedPeaks.get(pool) ?? null));
    const computeUtil =
      tokensPerS !== null &&
      meanReplicas !== null &&
      meanReplicas > 0 &&
      peakTokensPerS !== null &&
      peakTokensPerS > 0
        ? tokensPerS / meanReplicas / peakTokensPerS
        : null;
    return {
      bucket,
      pool,
      model: typeof row.model === 'string' ? row.model : null,
      region: typeof row.region === 'string' ? row.region : null,
      gpuType,
      requests,
      gpuMs,
      tokens,
      outputTokens,
      explicitCostUsd,
      replicas,
      meanReplicas,
      replicaSeconds,
      gpusPerReplica,
      gpuHourUsd,
      replicaCostUsd,
      costUsd: replicaCostUsd ?? explicitCostUsd,
      basis,
      basisTotal,
      kvUsage: toNumberOrNull(row.kv_usage),
      queueDepth: toNumberOrNull(row.queue_depth),
      tokensPerS,
      peakTokensPerS,
      computeUtil,
    };
  });
}

/** pricing.gpu_hour_usd[gpu_type], else pricing.default_gpu_hour_usd, else unknown. */
export function priceFor(gpuType: string | null, config: GovernorConfig): number | null {
  if (gpuType !== null) {
    const exact = config.pricing.gpu_hour_usd[gpuType];
    if (exact !== undefined) return exact;
  }
  return config.pricing.default_gpu_hour_usd ?? null;
}

/** The share of a pool's cost that a group's usage of the pool carries. */
export function shareOfPool(
  pool: PoolBucket,
  usage: { gpuMs: number | null; tokens: number; requests: number },
): number {
  if (pool.basis === null || pool.basisTotal <= 0) return 0;
  const used =
    pool.basis === 'gpu_time' ? (usage.gpuMs ?? 0) : pool.basis === 'tokens' ? usage.tokens : usage.requests;
  return used / pool.basisTotal;
}
