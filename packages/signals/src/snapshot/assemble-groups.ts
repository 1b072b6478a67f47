import type { GroupDimension, HopLatency, Percentiles } from '@governor/conventions';
import { classifyUtilizationRatio } from '@governor/conventions';
import { HOP_KEYS, type GroupKey, type SignalGroupDetail } from '../signal-group.ts';
import { toNumberOrNull } from '../sql-params.ts';
import { type PoolBucket, shareOfPool } from './pool-costs.ts';
import { OTHER_GROUP_KEY, type Row, groupKeyId, readGroupKey } from './window-rows.ts';

// Turns the rows of one bucket into SignalGroups: ratios, cost allocation and utilization. A value
// without data is null, never 0; counts (requests, tasks) are 0 when there were none.

/** Dimensions that describe a pool (capacity, cost, utilization belong to pools). */
const POOL_DIMENSIONS: readonly GroupDimension[] = ['pool', 'model', 'region', 'gpu_type'];

export interface BucketInput {
  by: readonly GroupDimension[];
  filter: Partial<Record<GroupDimension, string>>;
  /** Length of the bucket (the window for a snapshot). */
  seconds: number;
  requests: readonly Row[];
  weights: readonly Row[];
  pools: readonly PoolBucket[];
  /** More groups than the cap: a pool's group that is not among the kept ones is `other`. */
  truncated?: boolean;
}

interface Accumulator {
  key: GroupKey;
  request: Row | null;
  costUsd: number | null;
  pools: PoolBucket[];
}

export function isPoolLevelView(
  by: readonly GroupDimension[],
  filter: Partial<Record<GroupDimension, string>>,
): boolean {
  return (
    by.every((d) => POOL_DIMENSIONS.includes(d)) &&
    Object.keys(filter).every((d) => POOL_DIMENSIONS.includes(d as GroupDimension))
  );
}

export function assembleGroups(input: BucketInput): SignalGroupDetail[] {
  const { by, filter } = input;
  const groups = new Map<string, Accumulator>();
  const groupFor = (key: GroupKey): Accumulator => {
    const id = groupKeyId(key);
    let acc = groups.get(id);
    if (!acc) {
      acc = { key, request: null, costUsd: null, pools: [] };
      groups.set(id, acc);
    }
    return acc;
  };
  const addCost = (acc: Accumulator, usd: number) => {
    acc.costUsd = (acc.costUsd ?? 0) + usd;
  };

  if (by.length === 0) groupFor({});
  for (const row of input.requests) groupFor(readGroupKey(row, by)).request = row;

  const poolsByName = new Map<string | null, PoolBucket>(input.pools.map((p) => [p.pool, p]));
  // Requests' share of each pool's replica cost (GPU time, else tokens, else requests); pools
  // without a replica-based cost contribute their spans' explicit governor.cost.usd directly.
  for (const row of input.weights) {
    const acc = groupFor(readGroupKey(row, by));
    const poolName = typeof row.pool === 'string' ? row.pool : null;
    const pool = poolsByName.get(poolName);
    if (pool && poolName !== null && pool.replicaCostUsd !== null) {
      const share = shareOfPool(pool, {
        gpuMs: toNumberOrNull(row.gpu_ms),
        tokens: toNumberOrNull(row.tokens) ?? 0,
        requests: toNumberOrNull(row.requests) ?? 0,
      });
      addCost(acc, pool.replicaCostUsd * share);
    } else {
      const explicit = toNumberOrNull(row.explicit_cost_usd);
      if (explicit !== null) addCost(acc, explicit);
    }
  }

  const poolLevel = isPoolLevelView(by, filter);
  const idlePools = input.pools.filter(
    (p) => p.pool !== null && p.requests === 0 && p.replicaCostUsd !== null,
  );
  if (poolLevel) {
    // Capacity belongs to the group the pool itself falls into; idle pools' cost too.
    for (const pool of input.pools) {
      if (pool.pool === null || !poolMatches(pool, filter)) continue;
      const key = poolKey(pool, by);
      const acc = groupFor(input.truncated && !groups.has(groupKeyId(key)) ? OTHER_GROUP_KEY : key);
      acc.pools.push(pool);
      if (pool.requests === 0 && pool.replicaCostUsd !== null) addCost(acc, pool.replicaCostUsd);
    }
  } else if (idlePools.length > 0) {
    // Idle capacity costs money too: spread it over all groups in proportion to the cost already
    // allocated to them (the fleet's spend, not only the filtered part).
    const idleUsd = idlePools.reduce((s, p) => s + (p.replicaCostUsd ?? 0), 0);
    const allocatedUsd = input.pools.filter((p) => p.requests > 0).reduce((s, p) => s + (p.costUsd ?? 0), 0);
    if (allocatedUsd > 0) {
      for (const acc of groups.values()) {
        if (acc.costUsd !== null) addCost(acc, (idleUsd * acc.costUsd) / allocatedUsd);
      }
    }
  }

  return [...groups.values()]
    .map((acc) => {
      const group = toSignalGroup(acc, poolLevel, input.seconds);
      return acc.key === OTHER_GROUP_KEY && by.length > 0 ? { ...group, other: true } : group;
    })
    .sort(compareKeys);
}

/** A group with no data in a bucket: counts 0, every value null. */
export function emptyGroup(key: GroupKey): SignalGroupDetail {
  return toSignalGroup({ key, request: null, costUsd: null, pools: [] }, false, 0);
}

function toSignalGroup(acc: Accumulator, poolLevel: boolean, seconds: number): SignalGroupDetail {
  const r = acc.request ?? {};
  // Sums of sampling weights: whole requests and tasks as an operator counts them.
  const sampledRequests = toNumberOrNull(r.sampled_requests) ?? 0;
  const count = (v: unknown) => {
    const n = toNumberOrNull(v) ?? 0;
    return sampledRequests > 0 ? Math.round(n) : n;
  };
  const requests = count(r.requests);
  const perRequest = (v: unknown) => (requests > 0 ? (toNumberOrNull(v) ?? 0) / requests : null);
  const tasks = count(r.tasks);
  const successfulTasks = count(r.successful_tasks);
  const goodTasks = count(r.good_tasks);
  const cacheKnown = toNumberOrNull(r.cache_known) ?? 0;
  const costUsd = acc.costUsd;
  const capacity = poolLevel ? capacityOf(acc.pools) : null;
  const utilizationRatio =
    capacity && capacity.memoryUtil !== null && capacity.computeUtil !== null && capacity.computeUtil > 0
      ? capacity.memoryUtil / capacity.computeUtil
      : null;
  const hops: SignalGroupDetail['hops'] = {};
  for (const hop of HOP_KEYS) {
    const q = readList(r[hop === 'queue' ? 'queue_q' : `hop_${hop}_q`]);
    if (q[0] === null || q[0] === undefined) continue;
    const latency: HopLatency = {
      p50: q[0],
      p95: q[1] ?? null,
      shareOfE2e: toNumberOrNull(r[`hop_${hop}_share`]),
      shareOfTtft: toNumberOrNull(r[`hop_${hop}_ttft_share`]),
    };
    hops[hop] = latency;
  }
  const outputTokens = toNumberOrNull(r.output_tokens);
  const spanQueueDepth = toNumberOrNull(r.span_queue_depth);
  return {
    key: acc.key,
    requests,
    ttftMs: percentiles(r.ttft_q),
    serverTtftMs: percentiles(r.server_ttft_q),
    e2eMs: percentiles(r.e2e_q),
    errorRate: perRequest(r.errors),
    overloadRate: perRequest(r.overload_errors),
    preemptionRate: perRequest(r.preempted),
    goodput: tasks > 0 ? goodTasks / tasks : null,
    utilizationRatio,
    memoryUtil: capacity?.memoryUtil ?? null,
    computeUtil: capacity?.computeUtil ?? null,
    utilizationBound: classifyUtilizationRatio(utilizationRatio),
    successPerDollar: costUsd !== null && costUsd > 0 ? successfulTasks / costUsd : null,
    costPerSuccessfulTaskUsd: costUsd !== null && successfulTasks > 0 ? costUsd / successfulTasks : null,
    costUsd,
    tasks,
    successfulTasks,
    goodTasks,
    abandonedTasks: count(r.abandoned_tasks),
    pendingTasks: count(r.pending_tasks),
    taskE2eMs: percentiles(r.task_e2e_q),
    retries: count(r.retries),
    retryRatio: perRequest(r.retries),
    queueMs: percentiles(r.queue_q),
    queueDepth: capacity?.queueDepth ?? spanQueueDepth,
    cacheHitRate: cacheKnown > 0 ? (toNumberOrNull(r.cache_hits) ?? 0) / cacheKnown : null,
    tokensPerS: outputTokens === null || seconds <= 0 ? null : outputTokens / seconds,
    replicas: capacity?.replicas ?? null,
    peakTokensPerSPerReplica: capacity?.peakTokensPerS ?? null,
    hops,
    sampled: sampledRequests > 0,
    samplingRatio:
      sampledRequests > 0 && requests > 0
        ? (toNumberOrNull(r.raw_requests) ?? 0) / (toNumberOrNull(r.requests) ?? 1)
        : null,
  };
}

interface Capacity {
  replicas: number | null;
  memoryUtil: number | null;
  computeUtil: number | null;
  queueDepth: number | null;
  peakTokensPerS: number | null;
}

function capacityOf(pools: readonly PoolBucket[]): Capacity {
  let replicas: number | null = null;
  let kvWeighted = 0;
  let kvWeight = 0;
  let served = 0;
  let peakCapacity = 0;
  let peakReplicas = 0;
  let queueDepth: number | null = null;
  for (const p of pools) {
    if (p.replicas !== null) replicas = (replicas ?? 0) + p.replicas;
    if (p.kvUsage !== null) {
      const w = p.meanReplicas ?? 1;
      kvWeighted += p.kvUsage * w;
      kvWeight += w;
    }
    if (p.tokensPerS !== null && p.meanReplicas !== null && p.meanReplicas > 0 && p.peakTokensPerS !== null) {
      served += p.tokensPerS;
      peakCapacity += p.meanReplicas * p.peakTokensPerS;
      peakReplicas += p.meanReplicas;
    }
    if (p.queueDepth !== null) queueDepth = (queueDepth ?? 0) + p.queueDepth;
  }
  return {
    replicas,
    memoryUtil: kvWeight > 0 ? kvWeighted / kvWeight : null,
    computeUtil: peakCapacity > 0 ? served / peakCapacity : null,
    queueDepth,
    peakTokensPerS: peakReplicas > 0 ? peakCapacity / peakReplicas : null,
  };
}

function poolMatches(pool: PoolBucket, filter: Partial<Record<GroupDimension, string>>): boolean {
  for (const [dim, value] of Object.entries(filter)) {
    const actual =
      dim === 'pool'
        ? pool.pool
        : dim === 'model'
          ? pool.model
          : dim === 'region'
            ? pool.region
            : pool.gpuType;
    if (actual !== value) return false;
  }
  return true;
}

function poolKey(pool: PoolBucket, by: readonly GroupDimension[]): GroupKey {
  const key: GroupKey = {};
  for (const dim of by) {
    key[dim] =
      dim === 'pool'
        ? pool.pool
        : dim === 'model'
          ? pool.model
          : dim === 'region'
            ? pool.region
            : pool.gpuType;
  }
  return key;
}

function readList(value: unknown): (number | null)[] {
  if (!Array.isArray(value)) return [null, null, null];
  return value.map((v) => toNumberOrNull(v));
}

function percentiles(value: unknown): Percentiles {
  const [p50 = null, p95 = null, p99 = null] = readList(value);
  return { p50, p95, p99 };
}

/** By key, the `other` group last. */
function compareKeys(a: SignalGroupDetail, b: SignalGroupDetail): number {
  if (a.other !== b.other) return a.other ? 1 : -1;
  return groupKeyId(a.key) < groupKeyId(b.key) ? -1 : groupKeyId(a.key) > groupKeyId(b.key) ? 1 : 0;
}
