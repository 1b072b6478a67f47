import { createServer as createHttpServer } from 'node:http';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import { serializerCompiler } from 'fastify-type-provider-zod';
import { type GovernorConfig, parseByteSize } from '@governor/conventions';
import type { Store, TelemetryStore } from '@governor/store';
import type { ControlEngine } from '@governor/control';
import type { AlertEngine } from '@governor/alerts';
import { type Signals, createSignals } from '@governor/signals';
import { alertsPlugin } from './api/alerts-plugin.ts';
import { consolePlugin } from './api/console-plugin.ts';
import { createControlMetricsProvider } from './api/control-metrics.ts';
import { controlPlugin } from './api/control-plugin.ts';
import { dashboardsPlugin } from './api/dashboards-plugin.ts';
import { healthPlugin } from './api/health-plugin.ts';
import { registerApiReference } from './api/register-api-reference.ts';
import { zodValidatorCompiler } from './api/zod-validation.ts';
import {
  createIngestMetricsProvider,
  createSignalsMetricsProvider,
  metricsPlugin,
} from './api/metrics-plugin.ts';
import { type MetricsRegistry, createMetricsRegistry } from './api/metrics-registry.ts';
import { signalsPlugin } from './api/signals-plugin.ts';
import { tasksPlugin } from './api/tasks-plugin.ts';
import { tracesPlugin } from './api/traces-plugin.ts';
import { sqlPlugin } from './api/sql-plugin.ts';
import { storagePlugin } from './api/storage-plugin.ts';
import { registerAuthHook } from './auth/auth-hook.ts';
import { type TokenRegistry, createTokenRegistry } from './auth/token-registry.ts';
import { toGovernorError } from './errors.ts';
import { type EventBus, createEventBus } from './events/event-bus.ts';
import { eventsPlugin } from './events/events-plugin.ts';
import { registerHttpMetrics } from './observability/http-metrics.ts';
import { registerRequestLogging, requestIdFor } from './observability/request-ids.ts';
import { createSelfMetrics } from './observability/self-metrics.ts';
import { type RetentionScheduler, createRetentionScheduler } from './retention/retention-scheduler.ts';
import type { IngestPipeline } from './otlp/ingest-pipeline.ts';
import { createIngestStageMetricsProvider } from './otlp/ingest-stage-metrics.ts';
import { otlpHttpPlugin } from './otlp/otlp-http-plugin.ts';

/**
 * How long an idle keep-alive connection stays open (announced as `Keep-Alive: timeout=120`). It must
 * outlast the idle timeout of the clients that send to Governor, or a client reuses a connection just
 * as the server closes it and the export fails with ECONNRESET: the OpenTelemetry Collector's HTTP
 * exporters keep idle connections 90 s (confighttp's `idle_conn_timeout`, Go's
 * `http.DefaultTransport.IdleConnTimeout`), and Node's agent (v20, lib/_http_agent.js
 * `keepSocketAlive`) honours the announced timeout only when the agent has a `timeout` of its own.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 120_000;

/** Limits on the HTTP listener: slow or idle clients must not hold connections for good. */
export interface HttpLimits {
  /** Whole request (headers and body) must arrive within this; answered 408 otherwise. */
  requestTimeoutMs: number;
  /** Request headers must arrive within this. */
  headersTimeoutMs: number;
  /** Connections past this are refused at accept; SSE subscribers count. */
  maxConnections: number;
}

/** The listener limits of `server:` (request_timeout_ms defaults to room for a 64 MiB OTLP body on a slow link; Fastify's own default is "never"). */
export function httpLimitsFrom(server: GovernorConfig['server']): HttpLimits {
  return {
    requestTimeoutMs: server.request_timeout_ms,
    headersTimeoutMs: server.headers_timeout_ms,
    maxConnections: server.max_connections,
  };
}

export interface AppOptions {
  config: GovernorConfig;
  http?: Partial<HttpLimits>;
  store: TelemetryStore;
  pipeline: IngestPipeline;
  logger?: boolean | object;
  isShuttingDown?: () => boolean;
  /** API tokens; default: resolved from config.auth and the environment. */
  auth?: TokenRegistry;
  /** Retention runs (timer started by startGovernor); default: one that runs on request only. */
  retention?: RetentionScheduler;
  /** What GET /api/events streams; default: a new bus. */
  events?: EventBus;
  /** The control loop behind /api/control, /api/recommendations, /api/actions and /api/policies. */
  control?: ControlEngine;
  /** Alerting behind /api/alerts and /api/receivers. */
  alerts?: AlertEngine;
  /** Signals behind /api/signals, /api/traces, /api/tasks and /metrics; default: a new one over `store`. */
  signals?: Signals;
  /** What GET /metrics serves; register more providers on it (e.g. governor_desired_replicas). */
  metrics?: MetricsRegistry;
}

/** Builds the Fastify app; main.ts only reads config and listens. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config, store, pipeline } = options;
  const limits: HttpLimits = { ...httpLimitsFrom(options.config.server), ...options.http };
  const app = Fastify({
    // Node checks request and header timeouts on an interval (30 s by default): check every
    // second so a slow upload is cut near its deadline.
    serverFactory: (handler) => {
      const server = createHttpServer(
        {
          requestTimeout: limits.requestTimeoutMs,
          headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
          connectionsCheckingInterval: 1_000,
        },
        handler,
      );
      server.maxConnections = limits.maxConnections;
      // Fastify sets 72 s only on servers it creates itself; Node's default is 5 s, and a client that
      // reuses a connection just as the server closes it gets ECONNRESET (KEEP_ALIVE_TIMEOUT_MS).
      server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
      return server;
    },
    logger: options.logger ?? false,
    // Finished requests are logged by registerRequestLogging, with levels by status.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 1024 * 1024,
    genReqId: requestIdFor,
    requestIdHeader: false,
  });
  registerRequestLogging(app);
  const httpMetrics = registerHttpMetrics(app);
  // Before any route plugin, so every encapsulated context inherits the hook.
  registerAuthHook(app, options.auth ?? createTokenRegistry(config.auth, process.env));

  app.setErrorHandler((error, request, reply) => {
    const gov = toGovernorError(error);
    if (gov.code === 'GOV_ERR_INTERNAL') request.log.error({ err: error }, 'request failed');
    if (gov.retryAfterS !== undefined) reply.header('Retry-After', String(gov.retryAfterS));
    reply
      .code(gov.statusCode)
      .send({ error: { code: gov.code, message: gov.message, requestId: request.id } });
  });
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({
      error: {
        code: 'GOV_ERR_NOT_FOUND',
        message: `no route for ${request.method} ${request.url}`,
        requestId: request.id,
      },
    });
  });

  // Routes validate and serialize through their zod schemas, which also generate /api/openapi.json.
  app.setValidatorCompiler(zodValidatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  await registerApiReference(app);

  await app.register(otlpHttpPlugin, { pipeline, maxBodyBytes: config.server.max_body_bytes });
  await app.register(healthPlugin, {
    store,
    maxQueuedRows: config.server.max_queued_spans,
    startedAt: Date.now(),
    isShuttingDown: options.isShuttingDown ?? (() => false),
  });
  await app.register(sqlPlugin, { store, defaultLimit: 1000, timeoutMs: config.server.sql_timeout_ms });
  await app.register(dashboardsPlugin, { dir: config.dashboards.dir });
  const retention = options.retention ?? createRetentionScheduler(store, config);
  await app.register(storagePlugin, { store, retention });
  const signals =
    options.signals ?? (store.engine === 'duckdb' ? createSignals(store as Store, config) : null);
  if (!signals) throw new Error('buildApp: a ClickHouse store needs the node’s signals (options.signals)');
  const metrics = options.metrics ?? createMetricsRegistry();
  metrics.register('signals', createSignalsMetricsProvider(signals, config));
  metrics.register(
    'ingest',
    createIngestMetricsProvider(pipeline.counters, store, () => signals.rollupLag()),
  );
  metrics.register(
    'ingest_stages',
    createIngestStageMetricsProvider(store, () => signals.refreshStepSeconds()),
  );
  await app.register(signalsPlugin, { signals, config });
  await app.register(tracesPlugin, { signals });
  await app.register(tasksPlugin, { signals, config });
  await app.register(metricsPlugin, { registry: metrics });
  const events = options.events ?? createEventBus();
  const { control, alerts } = options;
  if (control) metrics.register('control', createControlMetricsProvider(control));
  const selfMetrics = createSelfMetrics({
    store,
    retention,
    http: httpMetrics,
    events,
    duckdb: {
      memoryLimitBytes: parseByteSize(config.server.duckdb_memory_limit),
      threads: config.server.duckdb_threads,
    },
    ...(control ? { controlPendingDeliveries: () => control.pendingDeliveries() } : {}),
    ...(alerts ? { alertDeliveries: () => alerts.deliveryStats() } : {}),
  });
  metrics.register('governor', () => selfMetrics.render());
  app.addHook('onClose', async () => selfMetrics.close());
  await app.register(eventsPlugin, { bus: events });
  if (options.control) await app.register(controlPlugin, { engine: options.control });
  if (options.alerts) await app.register(alertsPlugin, { engine: options.alerts, events });
  // Last: its GET /* catch-all serves the console and must not shadow any API route.
  await app.register(consolePlugin, {
    bootstrap: { slo: { ttftMs: config.slo.ttft_ms ?? null, e2eMs: config.slo.e2e_ms ?? null } },
  });
  return app;
}
