import { readFileSync } from 'node:fs';
import type { Store } from '@governor/store';

const SQL = readFileSync(new URL('./read-ready-replicas.sql', import.meta.url), 'utf8');

/**
 * Ready replicas per pool: a scale-up has taken effect once the new replicas serve (report runtime
 * gauges), not when they are merely paid for. `lookbackMs` bounds how stale a sample may be.
 */
export function createReadyReplicasReader(
  store: Pick<Store, 'query'>,
  lookbackMs = 60_000,
): (atNs: bigint) => Promise<Map<string, number>> {
  return async (atNs) => {
    const rows = await store.query<{ pool: string; ready: number }>(SQL, {
      from_ns: atNs - BigInt(lookbackMs) * 1_000_000n,
      at_ns: atNs,
    });
    return new Map(rows.map((r) => [r.pool, Number(r.ready)]));
  };
}
