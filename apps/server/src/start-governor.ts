import { type AlertEngine, createAlertEngine } from '@governor/alerts';
import { type GovernorConfig, maxAcceptedEventNs, maxRollupLagMs } from '@governor/conventions';
import { type ControlEngine, createActuatorsFromConfig, createControlEngine } from '@governor/control';
import type { Signals } from '@governor/signals';
import type { LeaderLease, TelemetryStore } from '@governor/store';
import type { FastifyInstance } from 'fastify';
import { checkBindAddress } from './auth/check-bind-address.ts';
import { createGrpcAuthorizer } from './auth/grpc-authorizer.ts';
import { createTokenRegistry } from './auth/token-registry.ts';
import { type MetricsRegistry, createMetricsRegistry } from './api/metrics-registry.ts';
import { type HttpLimits, buildApp } from './build-app.ts';
import { createLeaderAlerts } from './control/leader-alerts.ts';
import { createLeaderControl } from './control/leader-control.ts';
import type { ControlTimeReset } from './control/reset-control-time.ts';
import { type EngineParts, openEngine } from './engines/open-engine.ts';
import { SELF_SERVICE_NAME } from './observability/self-tracing-spans.ts';
import { startSelfTracing } from './observability/self-tracing.ts';
import { createRetentionScheduler, yieldToRollup } from './retention/retention-scheduler.ts';
import { type EventBus, createEventBus } from './events/event-bus.ts';
import { type IngestPipeline, createIngestPipeline } from './otlp/ingest-pipeline.ts';
import { type OtlpGrpcServer, startOtlpGrpcServer } from './otlp/otlp-grpc-server.ts';
import { threadpoolWarning } from './threadpool-size.ts';

/** At shutdown, reads still running this long after intake stopped are interrupted. */
const SHUTDOWN_READ_GRACE_MS = 2_000;

export interface RunningGovernor {
  httpUrl: string;
  httpPort: number;
  grpcPort: number;
  app: FastifyInstance;
  store: TelemetryStore;
  /** Where telemetry and state live (store.engine). */
  engine: EngineParts;
  pipeline: IngestPipeline;
  /** The control loop (also behind /api/control/evaluate and /api/recommendations). */
  control: ControlEngine;
  /** What GET /api/events streams; publish `{type, data}` to reach every console. */
  events: EventBus;
  /** Alert rules, notifications and their deliveries (also behind /api/alerts). */
  alerts: AlertEngine;
  /** The signals behind the API, the control loop and alerting (one instance, shared rollups). */
  signals: Signals;
  /** What GET /metrics serves; `metrics.register(name, () => text)` adds families. */
  metrics: MetricsRegistry;
  /** Stops intake, flushes the write queue, checkpoints and closes the database. */
  close(): Promise<void>;
}

export interface StartOptions {
  config: GovernorConfig;
  logger?: boolean | object;
  /** Source of GOVERNOR_ADMIN_TOKEN, GOVERNOR_TOKENS and token_env variables; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** HTTP listener limits over those of `server:` in the config (tests shorten them). */
  http?: Partial<HttpLimits>;
}

export async function startGovernor({ config, logger, env, http }: StartOptions): Promise<RunningGovernor> {
  // Checked before the data directory is touched: a refused start leaves nothing behind.
  const auth = createTokenRegistry(config.auth, env ?? process.env);
  const bind = checkBindAddress(config.server.host, auth.enabled, config.server.insecure);
  const environment = env ?? process.env;
  const engine = await openEngine(config, environment);
  const { store, signals } = engine;
  // Span exports wait in the exporters while the rollup the reads need is too far behind.
  const pipeline = createIngestPipeline(store, config, { rollupLag: () => signals.rollupLag() });
  const events = createEventBus();
  let log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void } = {
    warn: () => {},
    error: () => {},
  };
  let control: ControlEngine | null = null;
  let alerts: AlertEngine;
  let controlReset: ControlTimeReset;
  let setLeader: ((leader: boolean) => Promise<void>) | null = null;
  try {
    // State dated past the event-time bound (written before intake refused future events) would
    // make every real tick look like time going backwards: bring it back to the watermark.
    const nowNs = BigInt(Date.now()) * 1_000_000n;
    controlReset = await engine.resetControlTime(
      (await signals.watermarkNs()) ?? nowNs,
      maxAcceptedEventNs(config.ingest, nowNs),
    );
    const createControl = (leader = false) =>
      createControlEngine({
        config,
        resumeDeliveries: leader,
        signals,
        repository: engine.repository,
        ...engine.readers,
        actuators: createActuatorsFromConfig(
          config.actuators,
          environment,
          config.pools,
          undefined,
          engine.rollbackStore,
        ),
        onEvent: (event) => events.publish(event),
        onError: (error) => log.error({ err: error }, 'control tick failed'),
      });
    const createAlerts = (leader = true) =>
      createAlertEngine({
        ...engine.alertState,
        // A follower's engine only reads: the leader sends what is pending.
        resumeDeliveries: leader,
        signals,
        config,
        externalUrl: config.alerts.external_url ?? `http://${config.server.host}:${config.server.http_port}`,
        env: environment,
        logger: { warn: (d, m) => log.warn(d, m), error: (d, m) => log.error(d, m) },
      });
    if (engine.startLease) {
      // Shared state: only the lease holder ticks, applies and alerts (control/leader-control.ts).
      const refreshMs = config.control.interval_s * 1000;
      const onError = (error: unknown) => log.error({ err: error }, 'changing the leader role failed');
      const leaderControl = await createLeaderControl({ create: createControl, refreshMs, onError });
      const leaderAlerts = await createLeaderAlerts({ create: createAlerts, refreshMs, onError });
      control = leaderControl.engine;
      alerts = leaderAlerts.engine;
      setLeader = async (leader) => {
        await leaderControl.setLeader(leader);
        await leaderAlerts.setLeader(leader);
      };
    } else {
      control = await createControl();
      alerts = await createAlerts();
    }
  } catch (error) {
    await control?.close();
    await engine.close();
    throw error;
  }
  let shuttingDown = false;
  // With shared state, one node — the leader — drops old partitions; the others skip their turn.
  let leads = () => engine.startLease === null;
  const retentionStore: TelemetryStore = engine.startLease
    ? {
        ...store,
        runRetention: (policy) =>
          leads()
            ? store.runRetention(policy)
            : Promise.resolve({
                runId: 'skipped-not-leader',
                startedAt: new Date().toISOString(),
                targets: [],
              }),
      }
    : store;
  const retention = createRetentionScheduler(retentionStore, config, (signal) =>
    yieldToRollup(signals, maxRollupLagMs(config.ingest), 60_000, 250, signal),
  );
  const metrics = createMetricsRegistry((name, error) =>
    log.error({ err: error }, `metrics provider ${name} failed`),
  );
  const app = await buildApp({
    config,
    ...(http ? { http } : {}),
    store,
    pipeline,
    logger,
    auth,
    retention,
    events,
    control,
    alerts,
    isShuttingDown: () => shuttingDown,
    signals,
    metrics,
  });
  log = app.log;
  const threadpool = threadpoolWarning(process.env.UV_THREADPOOL_SIZE);
  if (threadpool) app.log.warn(threadpool);
  if (controlReset.recommendations + controlReset.audit + controlReset.alerts > 0) {
    app.log.warn(
      controlReset,
      'control and alert state was dated in the future (past now + ingest.max_future_skew); moved back to the watermark',
    );
  }
  if (bind === 'insecure-no-auth') {
    app.log.warn(
      `auth is OFF and Governor listens on ${config.server.host} (--insecure): anyone who can reach this port can ingest, read data and apply actions. Configure tokens (docs/security.md) unless a proxy in front authenticates.`,
    );
  } else if (bind === 'auth-on') {
    app.log.info(`auth on: ${auth.tokens.map((t) => `${t.name} [${t.scopes.join('+')}]`).join(', ')}`);
  }
  let grpc: OtlpGrpcServer | null = null;
  try {
    await app.listen({ host: config.server.host, port: config.server.http_port });
    grpc = await startOtlpGrpcServer({
      pipeline,
      host: config.server.host,
      port: config.server.grpc_port,
      maxBodyBytes: config.server.max_body_bytes,
      authorize: createGrpcAuthorizer(auth),
    });
  } catch (error) {
    await app.close();
    await control.close();
    await alerts.stop();
    await engine.close();
    throw error;
  }
  const selfTracing = startSelfTracing(config.self_telemetry.traces, env ?? process.env);
  if (selfTracing.target) {
    app.log.info(
      selfTracing.target,
      `self-tracing on: Governor's own spans (service.name ${SELF_SERVICE_NAME}) go to ${selfTracing.target.endpoint} over OTLP ${selfTracing.target.protocol}`,
    );
  }
  control.start();
  alerts.start();
  // Keeps request_facts close to ingest, so reads (API, alerts, control ticks) catch up little.
  const rollupRefresh = engine.startRollup((error) => {
    // At shutdown the refresh in progress is cancelled on purpose (stopRollupWork).
    if (!shuttingDown) log.error({ err: error }, 'refreshing the signal rollups failed');
  });
  // With shared state, the control loop and alerting run on the lease holder only.
  let lease: LeaderLease | null = null;
  let repair: { stop(): Promise<void> } | null = null;
  if (engine.startLease && setLeader) {
    const changeRole = setLeader;
    lease = engine.startLease(
      (leader) => {
        app.log.info(
          leader ? 'this node now leads: it runs the control loop and alerting' : 'this node no longer leads',
        );
        void changeRole(leader);
      },
      (error) => {
        if (!shuttingDown) log.warn({ err: error }, 'the leader lease could not be checked (PostgreSQL)');
      },
    );
    const leaseNow = lease;
    leads = () => leaseNow.isLeader();
    repair =
      engine.startRepair?.(
        () => leaseNow.isLeader(),
        (error) => {
          if (!shuttingDown) log.error({ err: error }, 'repairing the request rollup failed');
        },
      ) ?? null;
    metrics.register('leader', () =>
      [
        '# HELP governor_control_leader 1 on the node that runs the control loop and alerting (store.engine: clickhouse).',
        '# TYPE governor_control_leader gauge',
        `governor_control_leader ${leaseNow.isLeader() ? 1 : 0}`,
        '',
      ].join('\n'),
    );
  }
  retention.start(app.log);
  const address = app.server.address();
  const httpPort = typeof address === 'object' && address ? address.port : config.server.http_port;
  const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
  let closing: Promise<void> | null = null;
  return {
    httpUrl: `http://${host}:${httpPort}`,
    httpPort,
    grpcPort: grpc.port,
    app,
    store,
    engine,
    pipeline,
    control,
    events,
    alerts,
    signals,
    metrics,
    close() {
      closing ??= (async () => {
        shuttingDown = true;
        // A refresh far behind would hold up the exit for minutes; the next start catches up. Stopped
        // first: a read waiting for the rollups then answers from them as they are.
        engine.stopRollupWork();
        // Requests in flight finish; a read still running after a short grace is interrupted and
        // answered 503 GOV_ERR_SHUTTING_DOWN (one heavy read held a soak's exit past the 30 s limit).
        const grace = setTimeout(() => store.stopReads(), SHUTDOWN_READ_GRACE_MS);
        // A keep-alive connection whose request was in flight when closing began would otherwise
        // stay open until its keep-alive timeout (72 s) before the HTTP server counts as closed.
        const idle = setInterval(() => app.server.closeIdleConnections(), 200);
        const phases = createShutdownPhases();
        // Background work stops at once, not after the HTTP server: a retention slice or a refresh
        // under way finishes (or is interrupted) while requests drain, instead of adding its time
        // after theirs (a soak's exit took 40.9 s, past the 30 s limit, with the waits in a row).
        const backgroundStopped = Promise.all([
          phases.time('rollup refresh', rollupRefresh.stop()),
          phases.time('retention', retention.stop()),
          ...(repair ? [phases.time('rollup repair', repair.stop())] : []),
        ]);
        await phases.time('HTTP and gRPC', Promise.all([app.close(), grpc?.close()]));
        clearTimeout(grace);
        clearInterval(idle);
        await backgroundStopped;
        await phases.time('write queue', pipeline.close());
        // The lease first: another node takes over while this one drains its deliveries.
        if (lease) await phases.time('leader lease', lease.stop());
        await phases.time('control loop', control.close());
        await phases.time('alerts', alerts.stop());
        await phases.time('store (final move and checkpoint)', engine.close());
        // Last, so spans of the shutdown's own work (a final refresh, a tick) are flushed too.
        await phases.time('self-tracing', selfTracing.shutdown());
        app.log.info(`shutdown took ${phases.summary()}`);
      })();
      return closing;
    },
  };
}

/** How long each part of a shutdown took, for the log line that says where the time went. */
function createShutdownPhases() {
  const started = performance.now();
  const took: string[] = [];
  return {
    /** Listed in the order begun, whatever order they end in. */
    async time<T>(name: string, work: Promise<T>): Promise<T> {
      const t = performance.now();
      const slot = took.push(`${name} (unfinished)`) - 1;
      try {
        return await work;
      } finally {
        took[slot] = `${name} ${((performance.now() - t) / 1000).toFixed(1)} s`;
      }
    },
    summary: () => `${((performance.now() - started) / 1000).toFixed(1)} s (${took.join(', ')})`,
  };
}
