import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import { type PrometheusText, createPrometheusText } from '@governor/signals';
import type { StorageStats, TelemetryStore } from '@governor/store';
import type { EventBus } from '../events/event-bus.ts';
import type { RetentionScheduler } from '../retention/retention-scheduler.ts';
import type { HttpMetrics } from './http-metrics.ts';

// Governor's own health on /metrics, next to the `ingest` provider's intake and writer figures:
// storage per table and of the export folder, retention runs, control ticks and actuator
// deliveries, alert webhook deliveries, events, HTTP requests by route, and the process. Read
// from counters the parts already keep (control and alerts are counted off the event bus);
// nothing here runs on the ingest path.

export interface SelfMetricsSources {
  store: TelemetryStore;
  retention: RetentionScheduler;
  http: HttpMetrics;
  events: EventBus;
  /** Queued/in-flight alert notifications, when the alert engine runs. */
  alertDeliveries?: () => { pending: number; inFlight: number };
  /** Control actions queued or in flight to actuators, when the control loop runs. */
  controlPendingDeliveries?: () => number;
  /** Storage stats scan every table's storage info; refreshed at most this often. Default 30 s. */
  storageEveryMs?: number;
  /** The DuckDB instance's settings (server.duckdb_memory_limit in bytes, server.duckdb_threads). */
  duckdb?: { memoryLimitBytes: number; threads: number };
}

export interface SelfMetrics {
  /** A provider for the /metrics registry. */
  render(): Promise<string>;
  close(): void;
}

export function createSelfMetrics(sources: SelfMetricsSources): SelfMetrics {
  const storageEveryMs = sources.storageEveryMs ?? 30_000;
  let storage: { at: number; stats: StorageStats } | null = null;
  let storagePending: Promise<void> | null = null;
  const refreshStorage = () => {
    storagePending ??= sources.store
      .storageStats()
      .then((stats) => {
        storage = { at: Date.now(), stats };
      })
      .catch(() => undefined)
      .finally(() => {
        storagePending = null;
      });
    return storagePending;
  };

  // Event-loop delay as prom-client's default metrics name it (nodejs_eventloop_lag_*), over the
  // time since the previous scrape: every OTLP acknowledgement, commit and answer waits for the
  // loop, so a stall here is latency everywhere. A 10-ms timer samples it (libuv, no JS).
  const loopDelay = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
  loopDelay.enable();

  const eventCounts = new Map<string, number>();
  let controlTicks = 0;
  const actuatorDeliveries = new Map<string, number>();
  const webhookDeliveries = new Map<string, { receiver: string; status: string; count: number }>();
  const unsubscribe = sources.events.subscribe((event) => {
    eventCounts.set(event.type, (eventCounts.get(event.type) ?? 0) + 1);
    const data = (event.data ?? {}) as Record<string, unknown>;
    if (event.type === 'control.tick') controlTicks++;
    else if (event.type === 'control.delivery') {
      const status = String(data.status ?? 'unknown');
      actuatorDeliveries.set(status, (actuatorDeliveries.get(status) ?? 0) + 1);
    } else if (event.type === 'alert.delivery') {
      const receiver = String(data.receiver ?? 'unknown');
      const status = String(data.status ?? 'unknown');
      const key = `${receiver}\u0000${status}`;
      const entry = webhookDeliveries.get(key) ?? { receiver, status, count: 0 };
      entry.count++;
      webhookDeliveries.set(key, entry);
    }
  });

  return {
    async render() {
      if (!storage) await refreshStorage();
      else if (Date.now() - storage.at > storageEveryMs) void refreshStorage();
      const text = createPrometheusText();

      if (storage) {
        const s = storage.stats;
        const bytes = text.family(
          'governor_table_bytes',
          'gauge',
          'Checkpointed storage per table (rows written since the last checkpoint are in the WAL).',
        );
        const rows = text.family('governor_table_rows', 'gauge', 'Rows per table.');
        for (const t of s.tables) {
          bytes.sample({ table: t.table }, t.bytes);
          rows.sample({ table: t.table }, t.rows);
        }
        text
          .family('governor_database_file_bytes', 'gauge', 'Size of governor.duckdb.')
          .sample({}, s.database.fileBytes);
        text
          .family('governor_database_wal_bytes', 'gauge', 'Size of the write-ahead log.')
          .sample({}, s.database.walBytes);
        const exportBytes = text.family(
          'governor_export_bytes',
          'gauge',
          'Exported Parquet history per table.',
        );
        const exportFiles = text.family(
          'governor_export_files',
          'gauge',
          'Exported Parquet files per table.',
        );
        for (const e of s.exports) {
          exportBytes.sample({ table: e.target }, e.bytes);
          exportFiles.sample({ table: e.target }, e.files);
        }
      }

      const r = sources.retention.totals();
      const runs = text.family(
        'governor_retention_runs_total',
        'counter',
        'Retention runs per table, by outcome.',
      );
      for (const [target, n] of Object.entries(r.runs)) {
        const failed = r.failures[target] ?? 0;
        runs.sample({ table: target, outcome: 'ok' }, n - failed);
        runs.sample({ table: target, outcome: 'failed' }, failed);
      }
      const exported = text.family(
        'governor_retention_rows_exported_total',
        'counter',
        'Rows exported to Parquet and deleted from the live table.',
      );
      for (const [target, n] of Object.entries(r.rowsExported)) exported.sample({ table: target }, n);

      text
        .family('governor_control_ticks_total', 'counter', 'Control loop decision passes.')
        .sample({}, controlTicks);
      const actuators = text.family(
        'governor_actuator_deliveries_total',
        'counter',
        'Control actions handed to actuators, by outcome.',
      );
      for (const [status, n] of actuatorDeliveries) actuators.sample({ status }, n);
      if (sources.controlPendingDeliveries) {
        text
          .family(
            'governor_actuator_deliveries_pending',
            'gauge',
            'Control actions queued or in flight to actuators.',
          )
          .sample({}, sources.controlPendingDeliveries());
      }
      const webhooks = text.family(
        'governor_webhook_delivery_events_total',
        'counter',
        'Alert notification delivery transitions, by receiver and status.',
      );
      for (const d of webhookDeliveries.values())
        webhooks.sample({ receiver: d.receiver, status: d.status }, d.count);
      if (sources.alertDeliveries) {
        const d = sources.alertDeliveries();
        const pending = text.family(
          'governor_webhook_deliveries_pending',
          'gauge',
          'Alert notifications queued or in flight, by state.',
        );
        pending.sample({ state: 'queued' }, d.pending);
        pending.sample({ state: 'in_flight' }, d.inFlight);
      }
      const events = text.family(
        'governor_events_published_total',
        'counter',
        'Events published to GET /api/events, by type.',
      );
      for (const [type, n] of eventCounts) events.sample({ type }, n);

      const requests = text.family(
        'governor_http_requests_total',
        'counter',
        'HTTP requests by method, route pattern and status.',
      );
      const routes = sources.http.snapshot();
      for (const rt of routes) {
        for (const [status, n] of rt.byStatus)
          requests.sample({ method: rt.method, route: rt.route, status }, n);
      }

      const memory = process.memoryUsage();
      text
        .family('process_resident_memory_bytes', 'gauge', 'Resident memory of the Governor process.')
        .sample({}, memory.rss);
      text.family('nodejs_heap_used_bytes', 'gauge', 'V8 heap in use.').sample({}, memory.heapUsed);
      text
        .family('process_uptime_seconds', 'gauge', 'Seconds since the process started.')
        .sample({}, process.uptime());
      renderHttpHistogram(text, sources.http);
      renderLoopDelay(text, loopDelay);
      loopDelay.reset();

      if (sources.duckdb) {
        text
          .family(
            'governor_duckdb_memory_limit_bytes',
            'gauge',
            'DuckDB memory_limit for the whole instance (server.duckdb_memory_limit); ingest, signals and ad-hoc SQL share it.',
          )
          .sample({}, sources.duckdb.memoryLimitBytes);
        text
          .family('governor_duckdb_threads', 'gauge', 'DuckDB worker threads (server.duckdb_threads).')
          .sample({}, sources.duckdb.threads);
      }
      return text.toString();
    },
    close() {
      unsubscribe();
      loopDelay.disable();
    },
  };
}

const LOOP_DELAY_RESOLUTION_MS = 10;

/**
 * p50, p99 and max of the event loop's delay since the previous scrape, s (0 before a sample). The
 * histogram holds the time between the sampling timer's runs; its 10-ms period is taken off, so an
 * idle loop reads ~0 rather than 0.01.
 */
function renderLoopDelay(text: PrometheusText, delay: IntervalHistogram): void {
  const seconds = (ns: number) =>
    delay.count > 0 ? Math.max(0, ns - LOOP_DELAY_RESOLUTION_MS * 1e6) / 1e9 : 0;
  const since = 'since the previous scrape of /metrics';
  text
    .family('nodejs_eventloop_lag_p50_seconds', 'gauge', `Median event-loop delay ${since}.`)
    .sample({}, seconds(delay.percentile(50)));
  text
    .family('nodejs_eventloop_lag_p99_seconds', 'gauge', `99th percentile of the event-loop delay ${since}.`)
    .sample({}, seconds(delay.percentile(99)));
  text
    .family('nodejs_eventloop_lag_max_seconds', 'gauge', `Longest event-loop delay ${since}.`)
    .sample({}, seconds(delay.max));
}

/** Cumulative buckets, `+Inf` equal to the count, then `_sum` and `_count`, per method and route. */
function renderHttpHistogram(text: PrometheusText, http: HttpMetrics): void {
  const family = text.family(
    'governor_http_request_duration_seconds',
    'histogram',
    'HTTP request latency by method and route pattern (for OTLP: the ack latency, commit included).',
  );
  for (const rt of http.snapshot()) {
    const labels = { method: rt.method, route: rt.route };
    for (let i = 0; i < http.bucketsS.length; i++)
      family.sample({ ...labels, le: String(http.bucketsS[i]) }, rt.buckets[i] ?? 0, '_bucket');
    family.sample({ ...labels, le: '+Inf' }, rt.count, '_bucket');
    family.sample(labels, rt.sumS, '_sum');
    family.sample(labels, rt.count, '_count');
  }
}
