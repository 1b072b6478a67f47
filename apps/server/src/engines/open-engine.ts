import type { AlertStateOptions } from '@governor/alerts';
import { type GovernorConfig, clickHouseStoreOf, maxRollupLagMs } from '@governor/conventions';
import {
  type ControlRepository,
  type RollbackStore,
  createDuckDbRepository,
  createDuckDbRollbackStore,
  createEngineWorkReader,
  createPostgresRepository,
  createPostgresRollbackStore,
  createPrefillSpeedReader,
  createReadyReplicasReader,
  createRequestArrivalsReader,
  migratePostgresControlState,
} from '@governor/control';
import { migratePostgresAlertState } from '@governor/alerts';
import {
  type Signals,
  createClickHouseRollup,
  createSignals,
  createRepairSweep,
  startBackgroundRefresh,
  startClickHouseRollupLoop,
} from '@governor/signals';
import {
  type LeaderLease,
  type Store,
  type TelemetryStore,
  createStore,
  openClickHouseStore,
  startLeaderLease,
} from '@governor/store';
import pg from 'pg';
import {
  type ControlTimeReset,
  resetControlTime,
  resetPostgresControlTime,
} from '../control/reset-control-time.ts';
import { traceIfWorked } from '../observability/self-tracing-spans.ts';
import { storeOptionsFrom } from '../store-options.ts';

// The parts of a Governor node that depend on where its telemetry and state live (store.engine):
// the embedded DuckDB store, or ClickHouse for telemetry and PostgreSQL for state, shared by
// several nodes of which one — the holder of the leader lease — runs the control loop and alerting.

export interface EngineParts {
  readonly engine: 'duckdb' | 'clickhouse';
  store: TelemetryStore;
  /** The embedded store, for what only it has (the CLI's maintenance, the benchmarks); null on ClickHouse. */
  embedded: Store | null;
  signals: Signals;
  repository: ControlRepository;
  rollbackStore: RollbackStore;
  readers: {
    readReadyReplicas: ReturnType<typeof createReadyReplicasReader>;
    readPrefillSpeed: ReturnType<typeof createPrefillSpeedReader>;
    readEngineWork: ReturnType<typeof createEngineWorkReader>;
    readRequestArrivals: ReturnType<typeof createRequestArrivalsReader>;
  };
  /** Control and alert state dated past `boundNs` is moved back to `toNs` (only if any is). */
  resetControlTime(toNs: bigint, boundNs: bigint): Promise<ControlTimeReset>;
  /** Where the alert engine keeps its state. */
  alertState: { store: Store } | { state: AlertStateOptions };
  /**
   * Takes part in the leader election (ClickHouse); null: this node alone runs the control loop
   * and alerting (embedded).
   */
  startLease: ((onChange: (leader: boolean) => void, onError: (error: Error) => void) => LeaderLease) | null;
  /** Keeps request_facts close to ingest; returns how to stop it. */
  startRollup(onError: (error: unknown) => void): { stop(): Promise<void> };
  /**
   * The leader's repair of the rollup (ClickHouse: traces acknowledged by a node that died before
   * rolling them up); null on the embedded engine, whose rollup resumes from the store itself.
   */
  startRepair:
    | ((isLeader: () => boolean, onError: (error: unknown) => void) => { stop(): Promise<void> })
    | null;
  /** Shutdown: a rollup run far behind is cancelled rather than waited for. */
  stopRollupWork(): void;
  close(): Promise<void>;
}

/** The engine's services cannot be used as configured; the message says what to check. */
export class EngineStartError extends Error {
  override readonly name = 'EngineStartError';
}

export async function openEngine(config: GovernorConfig, env: NodeJS.ProcessEnv): Promise<EngineParts> {
  return config.store.engine === 'clickhouse' ? openClickHouseEngine(config, env) : openDuckDbEngine(config);
}

async function openDuckDbEngine(config: GovernorConfig): Promise<EngineParts> {
  const store = await createStore({
    ...storeOptionsFrom(config.server),
    maxQueuedRows: config.server.max_queued_spans,
    checkpointIntervalMs: config.server.checkpoint_interval_s * 1000,
  });
  // One Signals for the API, the control loop and alerting: they share its rollups.
  const signals = createSignals(store, config);
  return {
    engine: 'duckdb',
    store,
    embedded: store,
    signals,
    repository: createDuckDbRepository(store),
    // The values rollbacks restore live in the store, so a restart between apply and verify keeps them.
    rollbackStore: createDuckDbRollbackStore(store),
    readers: {
      readReadyReplicas: createReadyReplicasReader(store),
      readPrefillSpeed: createPrefillSpeedReader(store),
      readEngineWork: createEngineWorkReader(store),
      readRequestArrivals: createRequestArrivalsReader(store),
    },
    resetControlTime: (toNs, boundNs) => resetControlTime(store, toNs, boundNs),
    alertState: { store },
    startLease: null,
    startRepair: null,
    startRollup(onError) {
      const traced = {
        ...signals,
        refresh: () =>
          traceIfWorked(
            'governor.signals.rollup_refresh',
            () => store.ingestCpu.measureBackground('rollup_refresh', () => signals.refresh()),
            (done) =>
              done === null
                ? null
                : {
                    'governor.rollup.traces_touched': done.tracesTouched,
                    'governor.rollup.requests_written': done.requestsWritten,
                  },
          ),
      };
      return startBackgroundRefresh(traced, { intervalMs: 2000, onError });
    },
    stopRollupWork: () => store.rollup.stop(),
    close: () => store.close(),
  };
}

/** How often the rollup loop rolls up what this node acknowledged. */
const CLICKHOUSE_ROLLUP_INTERVAL_MS = 2000;
/** The leader's repair sweep: how often, over how much recent event time, and once when it takes over. */
const REPAIR_INTERVAL_MS = 30_000;
const REPAIR_RANGE_NS = 10n * 60n * 1_000_000_000n;
const REPAIR_TAKEOVER_RANGE_NS = 6n * 3600n * 1_000_000_000n;
const REPAIR_MAX_TRACES = 5_000;

async function openClickHouseEngine(config: GovernorConfig, env: NodeJS.ProcessEnv): Promise<EngineParts> {
  if (config.store.engine !== 'clickhouse') throw new Error('not the ClickHouse engine');
  const clickhouse = clickHouseStoreOf(config.store);
  const { postgres } = config.store;
  const postgresUrl = env[postgres.url_env];
  if (!postgresUrl)
    throw new EngineStartError(
      `store.engine is clickhouse but ${postgres.url_env} (store.postgres.url_env) is not set: set it to the PostgreSQL connection string (postgres://user:password@host:5432/governor) the nodes share`,
    );
  const pool = new pg.Pool({ connectionString: postgresUrl, max: 8 });
  // An idle client whose server went away (a PostgreSQL restart or failover) is reported on the pool,
  // which drops it; the next query connects again and reports its own error. Without a listener the
  // event would be an uncaught exception that stops the node.
  pool.on('error', () => undefined);
  try {
    await migratePostgresControlState(pool);
    await migratePostgresAlertState(pool);
  } catch (error) {
    await pool.end();
    throw new EngineStartError(
      `cannot prepare Governor's tables in PostgreSQL (${postgres.url_env}): ${(error as Error).message}; check the connection string and that the user may create tables`,
      { cause: error },
    );
  }
  let store: Awaited<ReturnType<typeof openClickHouseStore>>;
  try {
    store = await openClickHouseStore({
      config: clickhouse,
      env,
      readDeadlineMs: config.server.read_deadline_ms,
      maxQueuedRows: config.server.max_queued_spans,
    });
  } catch (error) {
    await pool.end();
    throw error;
  }
  const rollup = createClickHouseRollup(store.rollupIo, config);
  let rollupErrors: ((error: unknown) => void) | null = null;
  const loop = startClickHouseRollupLoop(rollup, {
    intervalMs: CLICKHOUSE_ROLLUP_INTERVAL_MS,
    onError: (error) => rollupErrors?.(error),
  });
  let closing = false;
  // After close began, the repair sweep rolls up what is acknowledged (none is, once intake stopped).
  store.onSpansAcknowledged((spans) => {
    if (!closing) loop.add(spans);
  });
  const signals = createSignals({ engine: 'clickhouse', reader: store.reader, rollup: loop }, config);
  const leaseName = `governor-leader:${clickhouse.database}`;
  // Takeover within two control intervals: a follower tries at least twice per interval.
  const leaseIntervalMs = Math.max(250, Math.min(5_000, (config.control.interval_s * 1000) / 2));
  return {
    engine: 'clickhouse',
    store,
    embedded: null,
    signals,
    repository: createPostgresRepository(pool),
    rollbackStore: createPostgresRollbackStore(pool),
    readers: {
      readReadyReplicas: createReadyReplicasReader(store.reader),
      readPrefillSpeed: createPrefillSpeedReader(store.reader),
      readEngineWork: createEngineWorkReader(store.reader),
      readRequestArrivals: createRequestArrivalsReader(store.reader),
    },
    resetControlTime: (toNs, boundNs) => resetPostgresControlTime(pool, toNs, boundNs),
    alertState: { state: { postgres: pool } },
    startLease: (onChange, onError) =>
      startLeaderLease({
        connectionString: postgresUrl,
        name: leaseName,
        intervalMs: leaseIntervalMs,
        onChange,
        onError,
      }),
    startRepair(isLeader, onError) {
      let sweeping: Promise<void> | null = null;
      let wasLeader = false;
      let again: NodeJS.Timeout | null = null;
      // A live node rolls up within ingest.max_rollup_lag (then refuses exports): a trace still
      // unrolled after that and two of its runs is the leader's to repair.
      const settleMs = maxRollupLagMs(config.ingest) + 2 * CLICKHOUSE_ROLLUP_INTERVAL_MS;
      const repair = createRepairSweep(store.reader, store.rollupIo, rollup, { settleMs });
      const sweep = async () => {
        const leader = isLeader();
        const tookOver = leader && !wasLeader;
        wasLeader = leader;
        if (!leader) return;
        const newest = await signals.newestEventNs();
        if (newest === null) return;
        const fromNs = newest - (tookOver ? REPAIR_TAKEOVER_RANGE_NS : REPAIR_RANGE_NS);
        const version = BigInt(Date.now()) * 1_000_000n;
        const done = await repair.sweep({ fromNs, toNs: newest, maxTraces: REPAIR_MAX_TRACES }, version);
        // Traces found unrolled now are looked at again once they have settled, not a whole
        // interval later.
        if (done.waiting > 0 && again === null)
          again = setTimeout(() => {
            again = null;
            start();
          }, settleMs + 100).unref();
      };
      const start = () => {
        sweeping ??= sweep()
          .catch(onError)
          .finally(() => {
            sweeping = null;
          });
      };
      const timer = setInterval(start, REPAIR_INTERVAL_MS);
      timer.unref();
      return {
        async stop() {
          clearInterval(timer);
          if (again) clearTimeout(again);
          await sweeping;
        },
      };
    },
    startRollup(onError) {
      rollupErrors = onError;
      // The loop runs until close(): spans acknowledged while intake drains are still rolled up.
      return { stop: async () => undefined };
    },
    stopRollupWork: () => undefined,
    async close() {
      closing = true;
      await loop.flush();
      await loop.stop();
      await rollup.close();
      await store.close();
      await pool.end();
    },
  };
}
