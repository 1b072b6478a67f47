import {
  type GovernorConfig,
  type GroupDimension,
  MAX_SIGNAL_GROUPS,
  maxAcceptedEventNs,
} from '@governor/conventions';
import { type ClickHouseReader, type Store, withReadDeadline } from '@governor/store';
import { formatDurationMs, nsToRfc3339 } from './format-duration.ts';
import { loadSql } from './load-sql.ts';
import { readSignalValue } from './read-signal-value.ts';
import {
  type FactsRefresher,
  type RefreshResult,
  type RefreshStep,
  type RollupLag,
  getFactsRefresher,
} from './rollup/refresh-request-facts.ts';
import { waitForRollups } from './rollup/wait-for-rollups.ts';
import type { ClickHouseRollupLoop } from './rollup/clickhouse-rollup-loop.ts';
import { CLICKHOUSE_WINDOW_SQL, clickHouseConfigParams } from './snapshot/clickhouse-window-queries.ts';
import { windowQueriesFor } from './snapshot/window-queries-for.ts';
import type { SqlReader } from './sql-reader.ts';
import type { SignalGroupDetail, SignalsSnapshotDetail } from './signal-group.ts';
import { pickSqlParams, toBigIntOrNull, toNumberOrNull } from './sql-params.ts';
import { emptyGroup } from './snapshot/assemble-groups.ts';
import { fillFromRuntimeCounts, readRuntimeCounts } from './snapshot/runtime-metrics.ts';
import {
  GAUGE_STALE_NS,
  buildWindowParams,
  foldWindowFlags,
  type WindowSpec,
} from './snapshot/window-params.ts';
import { assembleWindow } from './snapshot/assemble-window.ts';
import { type SqlTransform, WINDOW_SQL, groupKeyId, runWindowQueries } from './snapshot/window-rows.ts';
import { type TaskSearch, type TaskSummary, searchTasks } from './tasks/tasks.ts';
import {
  type TraceSearch,
  type TraceSummary,
  type TraceWaterfall,
  readTraceWaterfall,
  searchTraces,
} from './traces/traces.ts';

const NS_PER_MS = 1_000_000n;
const MINUTE_NS = 60_000n * NS_PER_MS;
/** History the learned peak throughput is taken from. */
const LEARNED_PEAK_HISTORY_NS = 24n * 60n * MINUTE_NS;
/** The learned peak is recomputed when the window end moves into a new 5-minute slot. */
const LEARNED_PEAK_SLOT_NS = 5n * MINUTE_NS;
/**
 * On ClickHouse also when it is older than this (wall clock): reads there do not wait for the
 * nodes' rollups, so a peak read while they catch up (a backlog flushed, a dead node's traces
 * repaired by the leader's 30 s sweep) lacks part of its history; the embedded store's reads wait.
 */
const CLICKHOUSE_LEARNED_PEAK_MAX_AGE_MS = 30_000;
/** Raw source: requests may have started this long before the window. */
const RAW_LOOKBACK_NS = 10n * MINUTE_NS;
export const MAX_SERIES_POINTS = 2000;

const NEWEST_EVENT_SQL = loadSql(import.meta.url, 'snapshot/newest-event.sql');
const RAW_FACTS_SQL = loadSql(import.meta.url, 'snapshot/raw-request-facts.sql');
const NEWEST_EVENT_IN_BOUNDS_SQL = loadSql(import.meta.url, 'snapshot/newest-event-in-bounds.sql');
const CLICKHOUSE_NEWEST_EVENT_SQL = loadSql(import.meta.url, 'snapshot/newest-event.clickhouse.sql');
const OLDEST_EVENT_SQL = loadSql(import.meta.url, 'snapshot/oldest-event.sql');
const CLICKHOUSE_OLDEST_EVENT_SQL = loadSql(import.meta.url, 'snapshot/oldest-event.clickhouse.sql');
const CLICKHOUSE_NEWEST_EVENT_IN_BOUNDS_SQL = loadSql(
  import.meta.url,
  'snapshot/newest-event-in-bounds.clickhouse.sql',
);

/**
 * The signals on ClickHouse (the scale-out engine): reads go to the cluster; request_facts there is
 * kept by every node's rollup loop, this node's among them. Reads do not wait for the rollups — the
 * other nodes' are out of reach — so a read sees what the nodes have rolled up (their lag is
 * `rollupLag`, this node's part of it).
 */
export interface ClickHouseSignalsSource {
  readonly engine: 'clickhouse';
  readonly reader: ClickHouseReader;
  /** This node's rollup loop (what it ingested, rolled up into request_facts). */
  readonly rollup: ClickHouseRollupLoop;
}

export type SignalsSource = 'rollup' | 'raw';

export interface SignalsOptions {
  /**
   * `rollup` (default): read request_facts, kept up to date incrementally (every read first applies
   * what was committed since the last refresh). `raw`: recompute request facts from spans on every
   * query — for verification and the benchmark; requests and tasks longer than 10 minutes are cut.
   */
  source?: SignalsSource;
  /** Server clock, ms since the epoch: the watermark never passes it + ingest.max_future_skew. */
  now?: () => number;
}

export interface SnapshotOptions {
  windowMs: number;
  by: GroupDimension[];
  /** Window end (event time, ns); default the watermark. */
  atNs?: bigint;
  filter?: Partial<Record<GroupDimension, string>>;
  /**
   * Only the groups' request counts and rates (requests, error and retry rates, tasks): no latency
   * percentiles and no pool gauges (what depends on them reads null or as if none were reported),
   * and a pool without traced requests is not filled from its runtime counters. One query instead
   * of three or four, for a reader that needs no more (the control loop's demand per priority).
   */
  countsOnly?: boolean;
}

export interface SeriesOptions {
  signal: string;
  by: GroupDimension[];
  fromNs: bigint;
  toNs: bigint;
  stepMs: number;
  filter?: Partial<Record<GroupDimension, string>>;
}

export interface SeriesPoint {
  /** RFC 3339 end of the (whole) step the value covers. */
  t: string;
  v: number | null;
}

export interface SeriesResult {
  signal: string;
  step: string;
  /** RFC 3339 watermark the points end by (each covers a whole step ending at or before it); null without data. */
  watermark: string | null;
  series: { key: Record<string, unknown>; points: SeriesPoint[] }[];
}

export interface TaskQuery {
  /** Tasks that ended in (from, to]; default to = the watermark, from = to − windowMs. */
  fromNs?: bigint;
  toNs?: bigint;
  windowMs?: number;
  filter?: Partial<Record<GroupDimension, string>>;
  status?: TaskSearch['status'];
  limit: number;
}

export interface Signals {
  /** newest event time (ns) minus config.signals.lateness_ms; null when no data */
  watermarkNs(): Promise<bigint | null>;
  /** Newest event time (latest span end, else latest metric point); null when no data. */
  newestEventNs(): Promise<bigint | null>;
  /** Oldest event time (earliest span start): where the store's telemetry begins; null when no spans. */
  oldestEventNs(): Promise<bigint | null>;
  snapshot(opts: SnapshotOptions): Promise<SignalsSnapshotDetail>;
  series(opts: SeriesOptions): Promise<SeriesResult>;
  /**
   * Applies what was committed since the last refresh to the rollups; null when there was nothing
   * new (or for source 'raw'). `force` runs the refresh even when nothing was written through the
   * store (e.g. after rows were deleted).
   */
  refresh(opts?: { force?: boolean }): Promise<RefreshResult | null>;
  /** How far the request rollup is behind ingest (FactsRefresher.lag); null for source 'raw'. */
  rollupLag(): RollupLag | null;
  /** Wall-clock seconds of each step of the request rollup's refresh since start; null for source 'raw'. */
  refreshStepSeconds(): Record<RefreshStep, number> | null;
  /**
   * Runs `fn` as one read: the signals calls inside it (e.g. the watermark, then a series up to it)
   * share one read deadline instead of getting one each. An HTTP handler that makes several calls
   * answers or fails within server.read_deadline_ms this way.
   */
  read<T>(fn: () => Promise<T>): Promise<T>;
  /** Requests (traces) matching a search, newest first. */
  traces(search: TraceSearch): Promise<TraceSummary[]>;
  /** All spans of a trace as a hop waterfall; null when no span has that id. */
  trace(traceId: string): Promise<TraceWaterfall | null>;
  /** Tasks that ended in a window, newest first, with their attempts and cost share. */
  tasks(query: TaskQuery): Promise<TaskSummary[]>;
  readonly source: SignalsSource;
}

export function createSignals(
  store: Store | ClickHouseSignalsSource,
  config: GovernorConfig,
  options: SignalsOptions = {},
): Signals {
  const source = options.source ?? 'rollup';
  if (store.engine === 'clickhouse' && source === 'raw')
    throw new Error('the raw source (request facts recomputed on every read) is only on the embedded engine');
  const db: SqlReader = store.engine === 'clickhouse' ? store.reader : store;
  const clickhouse = store.engine === 'clickhouse' ? store : null;
  const taskIdleNs = BigInt(config.signals.task_idle_ms) * NS_PER_MS;
  const refresher: FactsRefresher | null =
    source === 'rollup' && store.engine === 'duckdb' ? getFactsRefresher(store, { taskIdleNs }) : null;
  const waitForRefresher = async () => {
    if (refresher && store.engine === 'duckdb')
      await waitForRollups(refresher, store.readDeadlineMs, store.rollup.stopSignal);
  };
  const rawFactsSql = RAW_FACTS_SQL.trimEnd().replaceAll('{{task_idle_ns}}', String(taskIdleNs));
  const latenessNs = BigInt(config.signals.lateness_ms) * NS_PER_MS;
  const learnedPeaks = new Map<bigint, { peaks: Promise<Map<string, number>>; atMs: number }>();

  const now = options.now ?? Date.now;

  const storedNewestEventNs = async (): Promise<bigint | null> => {
    if (refresher) {
      await waitForRefresher();
      const spanNs = await refresher.newestSpanEndNs();
      if (spanNs !== null) return spanNs;
    }
    const [row] = await db.query<Record<string, unknown>>(
      clickhouse ? CLICKHOUSE_NEWEST_EVENT_SQL : NEWEST_EVENT_SQL,
    );
    return toBigIntOrNull(row?.span_ns) ?? toBigIntOrNull(row?.metric_ns);
  };
  // Intake refuses rows past the bound, but a store written before the guard existed (or by a
  // clock that has since been corrected) may hold some: the watermark is then the newest event
  // within the bound, so the windows show the data that is really there.
  const newestEventNs = async (): Promise<bigint | null> => {
    const newest = await storedNewestEventNs();
    const boundNs = maxAcceptedEventNs(config.ingest, BigInt(Math.trunc(now())) * NS_PER_MS);
    if (newest === null || newest <= boundNs) return newest;
    const [row] = await db.query<Record<string, unknown>>(
      clickhouse ? CLICKHOUSE_NEWEST_EVENT_IN_BOUNDS_SQL : NEWEST_EVENT_IN_BOUNDS_SQL,
      { max_event_ns: boundNs },
    );
    return toBigIntOrNull(row?.span_ns) ?? toBigIntOrNull(row?.metric_ns);
  };

  const transformFor = (spec: WindowSpec): { transform: SqlTransform; extra: Record<string, bigint> } => {
    if (source === 'rollup') return { transform: (sql) => sql, extra: {} };
    return {
      transform: (sql) => sql.replace(/^WITH$/m, `${rawFactsSql},`),
      extra: { scan_from_ns: spec.fromNs - RAW_LOOKBACK_NS, scan_to_ns: spec.toNs },
    };
  };

  const learnedPeaksAt = (toNs: bigint): Promise<Map<string, number>> => {
    const slot = toNs / LEARNED_PEAK_SLOT_NS;
    const entry = learnedPeaks.get(slot);
    const expired =
      entry !== undefined && clickhouse !== null && now() - entry.atMs > CLICKHOUSE_LEARNED_PEAK_MAX_AGE_MS;
    let cached = expired ? undefined : entry?.peaks;
    if (!cached) {
      learnedPeaks.delete(slot);
      const spec: WindowSpec = {
        fromNs: toNs - (source === 'raw' ? 60n * MINUTE_NS : LEARNED_PEAK_HISTORY_NS),
        toNs,
        stepNs: MINUTE_NS,
        by: [],
        filter: {},
        pendingAfterNs: toNs,
      };
      const { transform, extra } = transformFor(spec);
      const params = { ...buildWindowParams(spec, config), ...extra };
      const sql = foldWindowFlags(transform(WINDOW_SQL.learnedPeak), params);
      const read =
        db.engine === 'clickhouse'
          ? db.query<Record<string, unknown>>(
              CLICKHOUSE_WINDOW_SQL.learnedPeak,
              { ...params, ...clickHouseConfigParams(config) },
              { join_use_nulls: 1 },
            )
          : db.query<Record<string, unknown>>(sql, pickSqlParams(sql, params));
      cached = read.then((rows) => {
        const peaks = new Map<string, number>();
        for (const row of rows) {
          const peak = toNumberOrNull(row.peak_tokens_per_s);
          if (typeof row.pool === 'string' && peak !== null && peak > 0) peaks.set(row.pool, peak);
        }
        return peaks;
      });
      const added = { peaks: cached, atMs: now() };
      cached.catch(() => {
        if (learnedPeaks.get(slot) === added) learnedPeaks.delete(slot);
      });
      if (learnedPeaks.size > 16) learnedPeaks.delete(learnedPeaks.keys().next().value!);
      learnedPeaks.set(slot, added);
    }
    return cached;
  };

  /**
   * Computes every bucket of a window (one bucket for a snapshot, many for a series) and how many
   * groups there were before the cap (MAX_SIGNAL_GROUPS; the rest are one `other` group).
   */
  const computeWindow = async (
    spec: WindowSpec,
    countsOnly = false,
  ): Promise<{ buckets: SignalGroupDetail[][]; groupCount: number }> => {
    await waitForRefresher();
    const { transform, extra } = transformFor(spec);
    const params = { ...buildWindowParams(spec, config), ...extra };
    const rows = await runWindowQueries(windowQueriesFor(db, params, config, transform), params, config, {
      countsOnly,
    });
    return assembleWindow(rows, spec, config, learnedPeaksAt);
  };
  const computeBuckets = async (spec: WindowSpec) => (await computeWindow(spec)).buckets;

  /** By pool: a pool without traced requests takes its request figures from its runtime's counters. */
  const withRuntimeCounts = async (groups: SignalGroupDetail[], spec: WindowSpec) => {
    if (!spec.by.includes('pool')) return groups;
    // A pool split over several groups (by pool and tenant, say) cannot share its counters out.
    const groupsPerPool = new Map<unknown, number>();
    for (const g of groups) groupsPerPool.set(g.key.pool, (groupsPerPool.get(g.key.pool) ?? 0) + 1);
    const fillable = (g: SignalGroupDetail) =>
      typeof g.key.pool === 'string' && g.requests === 0 && groupsPerPool.get(g.key.pool) === 1;
    if (!groups.some(fillable)) return groups;
    const counts = await readRuntimeCounts(db, {
      from_ns: spec.fromNs,
      to_ns: spec.toNs,
      stale_ns: GAUGE_STALE_NS,
    });
    if (counts.size === 0) return groups;
    const seconds = Number(spec.toNs - spec.fromNs) / 1e9;
    return groups.map((g) => {
      const c = fillable(g) ? counts.get(g.key.pool as string) : undefined;
      return c ? fillFromRuntimeCounts(g, c, seconds) : g;
    });
  };

  const signals: Omit<Signals, 'read'> = {
    source,
    newestEventNs,
    async oldestEventNs() {
      const [row] = await db.query<Record<string, unknown>>(
        clickhouse ? CLICKHOUSE_OLDEST_EVENT_SQL : OLDEST_EVENT_SQL,
      );
      return toBigIntOrNull(row?.span_ns);
    },
    async watermarkNs() {
      const newest = await newestEventNs();
      return newest === null ? null : newest - latenessNs;
    },
    rollupLag() {
      if (clickhouse) return clickhouse.rollup.lag();
      return refresher ? refresher.lag() : null;
    },
    refreshStepSeconds() {
      return refresher ? refresher.stepSeconds() : null;
    },
    async refresh(opts) {
      if (clickhouse) {
        const started = performance.now();
        const done = await clickhouse.rollup.flush();
        return done === null
          ? null
          : {
              runs: 1,
              tracesTouched: done.traces,
              requestsWritten: done.requestsWritten,
              caughtUp: false,
              elapsedMs: performance.now() - started,
            };
      }
      if (!refresher) return null;
      return opts?.force ? refresher.refresh() : refresher.ensureFresh();
    },
    async traces(search) {
      await waitForRefresher();
      return searchTraces(db, config, search);
    },
    async trace(traceId) {
      await waitForRefresher();
      return readTraceWaterfall(db, config, traceId);
    },
    async tasks(query) {
      const newest = await newestEventNs();
      const watermark = newest === null ? null : newest - latenessNs;
      const toNs = query.toNs ?? watermark ?? BigInt(Date.now()) * NS_PER_MS;
      const windowNs = BigInt(Math.round(query.windowMs ?? 3_600_000)) * NS_PER_MS;
      return searchTasks(db, config, {
        fromNs: query.fromNs ?? toNs - windowNs,
        toNs,
        filter: query.filter ?? {},
        limit: query.limit,
        pendingAfterNs: watermark ?? toNs,
        ...(query.status === undefined ? {} : { status: query.status }),
      });
    },
    async snapshot(opts) {
      const windowNs = BigInt(Math.round(opts.windowMs)) * NS_PER_MS;
      if (windowNs <= 0n) throw new RangeError('the window must be longer than 0 ms');
      const newest = await newestEventNs();
      const watermark = newest === null ? null : newest - latenessNs;
      const atNs = opts.atNs ?? watermark ?? BigInt(Date.now()) * NS_PER_MS;
      const spec: WindowSpec = {
        fromNs: atNs - windowNs,
        toNs: atNs,
        stepNs: windowNs,
        by: dedupe(opts.by),
        filter: opts.filter ?? {},
        pendingAfterNs: watermark ?? atNs,
      };
      const {
        buckets: [traced = []],
        groupCount,
      } = await computeWindow(spec, opts.countsOnly === true);
      const groups = opts.countsOnly ? traced : await withRuntimeCounts(traced, spec);
      return {
        at: nsToRfc3339(atNs),
        window: formatDurationMs(opts.windowMs),
        groups,
        truncated: groupCount > MAX_SIGNAL_GROUPS,
        maxGroups: MAX_SIGNAL_GROUPS,
        otherGroups: Math.max(0, groupCount - MAX_SIGNAL_GROUPS),
      };
    },
    async series(opts) {
      const stepNs = BigInt(Math.round(opts.stepMs)) * NS_PER_MS;
      if (stepNs <= 0n) throw new RangeError('the step must be longer than 0 ms');
      if (opts.toNs <= opts.fromNs) throw new RangeError('`to` must be after `from`');
      const points = Number((opts.toNs - opts.fromNs + stepNs - 1n) / stepNs);
      if (points > MAX_SERIES_POINTS) {
        throw new RangeError(
          `the range holds ${points} steps; at most ${MAX_SERIES_POINTS} are allowed — use a larger step or a shorter range`,
        );
      }
      const newest = await newestEventNs();
      const watermark = newest === null ? null : newest - latenessNs;
      // Only whole steps that end by the watermark: a step past it is still filling (its tasks are
      // pending, its late spans still to come, while its cost is already counted), and a step cut
      // short by `to` covers less time than the chart draws it over — either would read as a dip.
      const completeToNs = watermark !== null && watermark < opts.toNs ? watermark : opts.toNs;
      const wholeSteps = completeToNs > opts.fromNs ? (completeToNs - opts.fromNs) / stepNs : 0n;
      const step = formatDurationMs(opts.stepMs);
      const watermarkAt = watermark === null ? null : nsToRfc3339(watermark);
      if (wholeSteps === 0n) return { signal: opts.signal, step, watermark: watermarkAt, series: [] };
      const by = dedupe(opts.by);
      const spec: WindowSpec = {
        fromNs: opts.fromNs,
        toNs: opts.fromNs + wholeSteps * stepNs,
        stepNs,
        by,
        filter: opts.filter ?? {},
        pendingAfterNs: watermark ?? opts.toNs,
      };
      const buckets = await computeBuckets(spec);
      const series = new Map<string, { key: Record<string, unknown>; points: SeriesPoint[] }>();
      for (const groups of buckets) {
        for (const group of groups) {
          const id = groupKeyId(group.key);
          if (!series.has(id)) series.set(id, { key: group.key, points: [] });
        }
      }
      buckets.forEach((groups, b) => {
        const t = nsToRfc3339(opts.fromNs + BigInt(b + 1) * stepNs);
        const byId = new Map(groups.map((g) => [groupKeyId(g.key), g]));
        for (const [id, s] of series) {
          const group = byId.get(id) ?? emptyGroup(s.key);
          s.points.push({ t, v: readSignalValue(group, opts.signal) });
        }
      });
      return { signal: opts.signal, step, watermark: watermarkAt, series: [...series.values()] };
    },
  };
  // Each read — its wait for the rollup and every query it runs — gets one read deadline in all.
  const oneRead = <T>(fn: () => Promise<T>) => withReadDeadline(db.readDeadlineMs, fn);
  return {
    ...signals,
    read: oneRead,
    watermarkNs: () => oneRead(() => signals.watermarkNs()),
    traces: (search) => oneRead(() => signals.traces(search)),
    trace: (traceId) => oneRead(() => signals.trace(traceId)),
    tasks: (query) => oneRead(() => signals.tasks(query)),
    snapshot: (opts) => oneRead(() => signals.snapshot(opts)),
    series: (opts) => oneRead(() => signals.series(opts)),
  };
}

function dedupe(by: readonly GroupDimension[]): GroupDimension[] {
  return [...new Set(by)];
}
