import type { Store } from '@governor/store';
import { loadSql } from '../load-sql.ts';

const SQL = loadSql(import.meta.url, 'read-ready-replicas.sql');

/** Replicas serving per pool at an event time. */
export type ReadyReplicasReader = (atNs: bigint) => Promise<Map<string, number>>;

/**
 * Ready replicas per pool: a scale-up has taken effect once the new replicas serve (report runtime
 * gauges), not when they are merely paid for. `lookbackMs` bounds how stale a sample may be.
 * Reads `metric_points`, which shows a point as soon as its write is acknowledged: no rollup to wait for.
 */
export function createReadyReplicasReader(
  store: Pick<Store, 'query'>,
  lookbackMs = 60_000,
): ReadyReplicasReader {
  return async (atNs) => {
    const rows = await store.query<{ pool: string; ready: number }>(SQL, {
      from_ns: atNs - BigInt(lookbackMs) * 1_000_000n,
      at_ns: atNs,
    });
    return new Map(rows.map((r) => [r.pool, Number(r.ready)]));
  };
}
