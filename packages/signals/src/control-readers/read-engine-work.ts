import { loadSql } from '../load-sql.ts';
import type { SqlReader } from '../sql-reader.ts';
import { toBigIntOrNull, toNumberOrNull } from '../sql-params.ts';

const SQL = loadSql(import.meta.url, 'read-engine-work.sql');
const CLICKHOUSE_POINTS_SQL = loadSql(import.meta.url, 'read-engine-work.clickhouse.sql');

/** What a pool's engines did over a window (see read-engine-work.sql). */
export interface EngineWork {
  promptTokens: number;
  generationTokens: number;
  /** Engine steps (iterations); each pays a fixed cost however few tokens it carries. */
  steps: number;
  /** GPU time with a non-empty batch, summed over the pool's replicas. */
  busyMs: number;
  /**
   * The prefix cache's lookups over the same stretch: prompt tokens looked up, and of those found
   * cached (vLLM's `vllm:prefix_cache_queries_total`, `vllm:prefix_cache_hits_total`), summed over
   * the replicas that report both; absent where none does.
   */
  prefixCache?: { queriedTokens: number; hitTokens: number };
}

export type EngineWorkReader = (atNs: bigint, windowMs: number) => Promise<Map<string, EngineWork>>;

interface EngineWorkRow {
  pool: string;
  prompt_tokens: number | null;
  generation_tokens: number | null;
  steps: number | null;
  busy_ms: number | null;
  prefix_queried: number | null;
  prefix_hits: number | null;
}

/**
 * Per pool, the engine work its runtime counters show over the window ending at `atNs`. Reads the
 * metric points, which show a point as soon as its write is acknowledged (DuckDB's `metric_points`,
 * ClickHouse's `metric_store`): no rollup to wait for on either engine. On ClickHouse the query
 * returns each series' points in order and the rates are taken here (engineWorkFromPoints).
 */
export function createEngineWorkReader(db: SqlReader): EngineWorkReader {
  return async (atNs, windowMs) => {
    const windowNs = BigInt(Math.round(windowMs)) * 1_000_000n;
    const params = {
      // One window further back, for the sample each interval starts from.
      lookback_ns: atNs - 2n * windowNs,
      from_ns: atNs - windowNs,
      at_ns: atNs,
    };
    const rows: EngineWorkRow[] =
      db.engine === 'clickhouse'
        ? engineWorkFromPoints(
            await db.query<Record<string, unknown>>(CLICKHOUSE_POINTS_SQL, params, { join_use_nulls: 1 }),
            params.from_ns,
          )
        : await db.query<EngineWorkRow>(SQL, params);
    const out = new Map<string, EngineWork>();
    for (const r of rows) {
      if (r.steps === null || r.busy_ms === null) continue;
      out.set(r.pool, {
        promptTokens: Number(r.prompt_tokens ?? 0),
        generationTokens: Number(r.generation_tokens ?? 0),
        steps: Number(r.steps),
        busyMs: Number(r.busy_ms),
        ...(r.prefix_queried === null || r.prefix_hits === null
          ? {}
          : { prefixCache: { queriedTokens: Number(r.prefix_queried), hitTokens: Number(r.prefix_hits) } }),
      });
    }
    return out;
  };
}

const DCGM_UTIL = 'DCGM_FI_DEV_GPU_UTIL';
const PROMPT = 'vllm:prompt_tokens_total';
const GENERATION = 'vllm:generation_tokens_total';
const STEPS = 'vllm:iteration_tokens_total';
const PREFIX_QUERIED = 'vllm:prefix_cache_queries_total';
const PREFIX_HITS = 'vllm:prefix_cache_hits_total';

interface Rate {
  inc: number;
  coveredNs: bigint;
}

/**
 * read-engine-work.sql's rows from the points read-engine-work.clickhouse.sql returns (series by
 * series, by time), for ClickHouse 18.16 (no window functions): the same rules, clause for clause
 * (that file states them), with the same floating-point operations in the same order, so the two
 * engines differ only in the order the final sums add. `last` is lag() over the series:
 * - increments: a GPU sample adds its busy share (clamped to 0–100 %, no value read as 0, as DuckDB's
 *   greatest() skips a NULL) times the time since the previous sample; a delta point its value (at
 *   least 0) since its start; a cumulative one its rise since the previous sample when the start is
 *   the same and the value did not go down, else nothing.
 * - rates: per series, the increments of samples in ($fromNs, …] over the time they cover.
 * - per pool: each replica with all four rates adds each rate × the time its prompt counter covered;
 *   one that also has both prefix cache rates adds those too.
 */
export function engineWorkFromPoints(
  points: readonly Record<string, unknown>[],
  fromNs: bigint,
): EngineWorkRow[] {
  // Per replica, per name: the summed increments and the time they cover (rates in the SQL).
  const replicas = new Map<string, { pool: string; rates: Map<string, Rate> }>();
  let seriesKey: string | null = null;
  let prev: { timeNs: bigint; startNs: bigint | null; v: number | null } | null = null;
  for (const row of points) {
    const pool = String(row.p_pool);
    const replica = String(row.replica);
    const name = String(row.name);
    const key = JSON.stringify([pool, replica, name]);
    if (key !== seriesKey) {
      seriesKey = key;
      prev = null;
    }
    const timeNs = toBigIntOrNull(row.time_ns) ?? 0n;
    const startNs = toBigIntOrNull(row.p_start);
    const v = toNumberOrNull(row.v);
    const last = prev;
    prev = { timeNs, startNs, v };
    let inc: number | null = null;
    let sinceNs: bigint | null = null;
    if (name === DCGM_UTIL) {
      if (last !== null) {
        inc = ((Math.min(Math.max(v ?? 0, 0), 100) / 100.0) * Number(timeNs - last.timeNs)) / 1e6;
        sinceNs = last.timeNs;
      }
    } else if (Number(row.p_temporality) === 1) {
      inc = Math.max(v ?? 0, 0);
      sinceNs = startNs;
    } else if (last !== null) {
      if (startNs === last.startNs && v !== null && last.v !== null && v >= last.v) inc = v - last.v;
      sinceNs = last.timeNs;
    }
    if (timeNs <= fromNs || inc === null || sinceNs === null || timeNs <= sinceNs) continue;
    const replicaKey = JSON.stringify([pool, replica]);
    const entry = replicas.get(replicaKey) ?? { pool, rates: new Map<string, Rate>() };
    replicas.set(replicaKey, entry);
    const rate = entry.rates.get(name) ?? { inc: 0, coveredNs: 0n };
    rate.inc += inc;
    rate.coveredNs += timeNs - sinceNs;
    entry.rates.set(name, rate);
  }
  interface Sums {
    prompt: number;
    generation: number;
    steps: number;
    busy: number;
    queried: number | null;
    hits: number | null;
  }
  const pools = new Map<string, Sums>();
  for (const { pool, rates } of replicas.values()) {
    const util = rates.get(DCGM_UTIL);
    const prompt = rates.get(PROMPT);
    const generation = rates.get(GENERATION);
    const steps = rates.get(STEPS);
    if (!util || !prompt || !generation || !steps) continue;
    // rate × covered time, as DuckDB computes sum(inc) / sum(ns) × the prompt counter's sum(ns).
    const spanNs = Number(prompt.coveredNs);
    const work = (r: Rate) => (r.inc / Number(r.coveredNs)) * spanNs;
    const sums = pools.get(pool) ?? {
      prompt: 0,
      generation: 0,
      steps: 0,
      busy: 0,
      queried: null,
      hits: null,
    };
    sums.prompt += work(prompt);
    sums.generation += work(generation);
    sums.steps += work(steps);
    sums.busy += work(util);
    const queried = rates.get(PREFIX_QUERIED);
    const hits = rates.get(PREFIX_HITS);
    if (queried && hits) {
      sums.queried = (sums.queried ?? 0) + work(queried);
      sums.hits = (sums.hits ?? 0) + work(hits);
    }
    pools.set(pool, sums);
  }
  return [...pools].map(([pool, sums]) => ({
    pool,
    prompt_tokens: sums.prompt,
    generation_tokens: sums.generation,
    steps: sums.steps,
    busy_ms: sums.busy,
    prefix_queried: sums.queried,
    prefix_hits: sums.hits,
  }));
}
