import { type GovernorConfig, MAX_SIGNAL_GROUPS } from '@governor/conventions';
import type { SignalGroupDetail } from '../signal-group.ts';
import { toNumberOrNull } from '../sql-params.ts';
import { assembleGroups } from './assemble-groups.ts';
import { computePoolBuckets } from './pool-costs.ts';
import type { WindowSpec } from './window-params.ts';
import type { WindowRows } from './window-rows.ts';

// A window's rows (runWindowQueries, on either engine) as signal groups per bucket: each pool's
// cost and utilization, then each group's figures and its share of the pools it used.

export async function assembleWindow(
  rows: WindowRows,
  spec: WindowSpec,
  config: GovernorConfig,
  /** Learned peak tokens/s per replica, read only when a pool's config names none. */
  peaksAt: (toNs: bigint) => Promise<Map<string, number>>,
): Promise<{ buckets: SignalGroupDetail[][]; groupCount: number }> {
  const bucketCount = Number((spec.toNs - spec.fromNs + spec.stepNs - 1n) / spec.stepNs);
  const bucketSeconds = (bucket: number) => {
    const start = spec.fromNs + BigInt(bucket) * spec.stepNs;
    const end = start + spec.stepNs < spec.toNs ? start + spec.stepNs : spec.toNs;
    return Number(end - start) / 1e9;
  };
  const needsLearnedPeak = rows.pools.some((r) => typeof r.pool === 'string' && r.peak_tokens_per_s == null);
  const peaks = needsLearnedPeak ? await peaksAt(spec.toNs) : new Map<string, number>();
  const pools = computePoolBuckets(rows.pools, bucketSeconds, config, peaks);
  const inBucket = <T extends { bucket?: unknown }>(list: readonly T[], b: number) =>
    list.filter((r) => toNumberOrNull(r.bucket) === b);
  const buckets: SignalGroupDetail[][] = [];
  for (let b = 0; b < bucketCount; b++) {
    buckets.push(
      assembleGroups({
        by: spec.by,
        filter: spec.filter,
        seconds: bucketSeconds(b),
        requests: inBucket(rows.requests, b),
        weights: inBucket(rows.weights, b),
        pools: pools.filter((p) => p.bucket === b),
        truncated: rows.groupCount > MAX_SIGNAL_GROUPS,
      }),
    );
  }
  return { buckets, groupCount: rows.groupCount };
}
