import type { Hop } from '../hops.ts';

// Shape of GET /api/signals (docs/api.md). A value without data is null, never 0.

export interface Percentiles {
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

export interface HopLatency {
  p50: number | null;
  p95: number | null;
  /** Mean share of the request's e2e latency spent in this hop (0–1). */
  shareOfE2e?: number | null;
  /** Mean share of TTFT spent in this hop (0–1); only hops before the first token count. */
  shareOfTtft?: number | null;
}

/**
 * Hop keys in hop attribution: the hops of a request (gateway, router, cache, queue, prefill,
 * decode, stream) plus `runtime` (runtime time not split further), `tool` and `other`
 * (unclassified spans). `queue` is the time in spans classified `scheduler`, or vLLM's
 * gen_ai.latency.time_in_queue.
 */
export const ATTRIBUTION_HOP_KEYS = [
  'gateway',
  'router',
  'cache',
  'queue',
  'prefill',
  'decode',
  'stream',
  'runtime',
  'tool',
  'other',
] as const;
export type AttributionHopKey = (typeof ATTRIBUTION_HOP_KEYS)[number];

/**
 * The utilization ratio's reading (memory_util / compute_util, DESIGN's signal table and
 * docs/sql.md): above `memoryAbove` a pool is memory-bound (its KV cache fills before its compute
 * does), below `computeBelow` compute-bound, balanced between. One definition for the signals, the
 * console and the control loop.
 */
export const UTILIZATION_BOUNDS = { memoryAbove: 1.2, computeBelow: 0.8 } as const;

export type UtilizationBound = 'memory' | 'compute' | 'balanced';

/** Which way a utilization ratio leans; null without one. */
export function classifyUtilizationRatio(ratio: number | null | undefined): UtilizationBound | null {
  if (ratio === null || ratio === undefined || !Number.isFinite(ratio)) return null;
  if (ratio > UTILIZATION_BOUNDS.memoryAbove) return 'memory';
  return ratio < UTILIZATION_BOUNDS.computeBelow ? 'compute' : 'balanced';
}

export const GROUP_DIMENSIONS = [
  'pool',
  'model',
  'region',
  'gpu_type',
  'tenant',
  'priority',
  'workflow_type',
] as const;
export type GroupDimension = (typeof GROUP_DIMENSIONS)[number];

/**
 * Most groups one signals read returns: the groups with the most requests keep their key, the rest
 * are added up into one `other` group. Bounds the work (and the answer) of a grouping by a
 * high-cardinality dimension such as tenant.
 */
export const MAX_SIGNAL_GROUPS = 1_000;

export interface SignalGroup {
  key: Partial<Record<GroupDimension, string | number | null>>;
  requests: number;
  ttftMs: Percentiles;
  serverTtftMs: Percentiles;
  e2eMs: Percentiles;
  errorRate: number | null;
  /**
   * The share of requests that timed out or were turned away (HTTP 408/504/429/503, gRPC
   * DEADLINE_EXCEEDED/RESOURCE_EXHAUSTED/UNAVAILABLE): the part of errorRate that a pool short of
   * capacity produces by itself, as opposed to faults. Absent for runtime-metrics groups.
   */
  overloadRate?: number | null;
  preemptionRate?: number | null;
  goodput: number | null;
  utilizationRatio: number | null;
  memoryUtil: number | null;
  computeUtil: number | null;
  successPerDollar: number | null;
  costPerSuccessfulTaskUsd: number | null;
  costUsd: number | null;
  tasks: number;
  successfulTasks: number;
  retryRatio: number | null;
  queueMs: Percentiles;
  queueDepth?: number | null;
  cacheHitRate: number | null;
  tokensPerS?: number | null;
  replicas: number | null;
  hops: Partial<Record<Hop, HopLatency>>;
  /**
   * True when some of the group's requests were head-sampled traces: counts, rates, tokens and cost
   * allocation are scaled by 1 ÷ the sampling probability (OTel `th`, or sampling.service_ratios).
   */
  sampled?: boolean;
  /** Stored ÷ represented requests (the effective sampling probability); null when not sampled. */
  samplingRatio?: number | null;
  /**
   * Where the request figures come from: `traces` (default), or `runtime_metrics` for a pool whose
   * requests are not traced — counts from its runtime's request counters, latency from its TTFT and
   * e2e histograms (as measured inside the runtime), tokens from its token counters.
   */
  source?: 'traces' | 'runtime_metrics';
  /**
   * True for the one group that adds up every group past the cap (MAX_SIGNAL_GROUPS by requests);
   * its key is empty.
   */
  other?: boolean;
}

export interface SignalsSnapshot {
  /** RFC 3339 */
  at: string;
  window: string;
  groups: SignalGroup[];
  /** True when there were more groups than `maxGroups`: the rest are in the `other` group. */
  truncated: boolean;
  /** The cap on groups (MAX_SIGNAL_GROUPS); the `other` group comes on top. */
  maxGroups: number;
  /** Groups added up into `other` (0 when not truncated). */
  otherGroups: number;
}
