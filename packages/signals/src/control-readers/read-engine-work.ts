import type { Store } from '@governor/store';
import { loadSql } from '../load-sql.ts';

const SQL = loadSql(import.meta.url, 'read-engine-work.sql');

/** What a pool's engines did over a window (see read-engine-work.sql). */
export interface EngineWork {
  promptTokens: number;
  generationTokens: number;
  /** Engine steps (iterations); each pays a fixed cost however few tokens it carries. */
  steps: number;
  /** GPU time with a non-empty batch, summed over the pool's replicas. */
  busyMs: number;
}

export type EngineWorkReader = (atNs: bigint, windowMs: number) => Promise<Map<string, EngineWork>>;

/**
 * Per pool, the engine work its runtime counters show over the window ending at `atNs`. Reads
 * `metric_points`, which shows a point as soon as its write is acknowledged: no rollup to wait for.
 */
export function createEngineWorkReader(store: Pick<Store, 'query'>): EngineWorkReader {
  return async (atNs, windowMs) => {
    const windowNs = BigInt(Math.round(windowMs)) * 1_000_000n;
    const rows = await store.query<{
      pool: string;
      prompt_tokens: number | null;
      generation_tokens: number | null;
      steps: number | null;
      busy_ms: number | null;
    }>(SQL, {
      // One window further back, for the sample each interval starts from.
      lookback_ns: atNs - 2n * windowNs,
      from_ns: atNs - windowNs,
      at_ns: atNs,
    });
    const out = new Map<string, EngineWork>();
    for (const r of rows) {
      if (r.steps === null || r.busy_ms === null) continue;
      out.set(r.pool, {
        promptTokens: Number(r.prompt_tokens ?? 0),
        generationTokens: Number(r.generation_tokens ?? 0),
        steps: Number(r.steps),
        busyMs: Number(r.busy_ms),
      });
    }
    return out;
  };
}
