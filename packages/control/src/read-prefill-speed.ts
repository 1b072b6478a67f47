import { readFileSync } from 'node:fs';
import type { Store } from '@governor/store';

const SQL = readFileSync(new URL('./read-prefill-speed.sql', import.meta.url), 'utf8');

/** Prefill milliseconds per uncached prompt token per pool over a window ending at `atNs`. */
export function createPrefillSpeedReader(
  store: Pick<Store, 'query'>,
): (atNs: bigint, windowMs: number) => Promise<Map<string, number>> {
  return async (atNs, windowMs) => {
    const rows = await store.query<{ pool: string; ms_per_token: number | null; requests: number }>(SQL, {
      from_ns: atNs - BigInt(Math.round(windowMs)) * 1_000_000n,
      at_ns: atNs,
    });
    const out = new Map<string, number>();
    for (const r of rows)
      if (r.ms_per_token !== null && Number(r.requests) >= 5) out.set(r.pool, Number(r.ms_per_token));
    return out;
  };
}
