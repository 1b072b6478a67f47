import { loadSql } from '../load-sql.ts';
import type { SqlReader } from '../sql-reader.ts';

const SQL = loadSql(import.meta.url, 'read-prefill-speed.sql');
const CLICKHOUSE_SQL = loadSql(import.meta.url, 'read-prefill-speed.clickhouse.sql');

/** A pool's prefill speed over a window (see read-prefill-speed.sql). */
export interface PrefillSpeed {
  /** Prefill milliseconds per uncached prompt token, over all requests. */
  msPerToken: number;
  /** The same for the fastest tenth of requests with long prompts; null with fewer than 5 of them. */
  fastestMsPerToken: number | null;
}

export type PrefillSpeedReader = (atNs: bigint, windowMs: number) => Promise<Map<string, PrefillSpeed>>;

/**
 * Prefill milliseconds per uncached prompt token per pool over a window ending at `atNs`. Reads the
 * spans, which show a span as soon as its write is acknowledged (DuckDB's `spans`, the ingest stage
 * included; ClickHouse's `span_store`): no rollup to wait for, unlike
 * createRequestArrivalsReader on DuckDB.
 */
export function createPrefillSpeedReader(db: SqlReader): PrefillSpeedReader {
  const sql = db.engine === 'clickhouse' ? CLICKHOUSE_SQL : SQL;
  return async (atNs, windowMs) => {
    const rows = await db.query<{
      pool: string;
      ms_per_token: number | null;
      requests: number;
      fastest_ms_per_token: number | null;
      long_requests: number;
    }>(sql, {
      from_ns: atNs - BigInt(Math.round(windowMs)) * 1_000_000n,
      at_ns: atNs,
    });
    const out = new Map<string, PrefillSpeed>();
    for (const r of rows) {
      if (r.ms_per_token === null || Number(r.requests) < 5) continue;
      out.set(r.pool, {
        msPerToken: Number(r.ms_per_token),
        fastestMsPerToken:
          r.fastest_ms_per_token !== null && Number(r.long_requests) >= 5
            ? Number(r.fastest_ms_per_token)
            : null,
      });
    }
    return out;
  };
}
