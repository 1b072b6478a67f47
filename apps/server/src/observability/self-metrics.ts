import type { PrometheusText } from '@governor/signals';
import type { StorageStats, Store } from '@governor/store';
import type { EventBus } from '../events/event-bus.ts';
import type { IngestPipeline } from '../otlp/ingest-pipeline.ts';
import type { RetentionScheduler } from '../retention/retention-scheduler.ts';
import type { HttpMetrics } from './http-metrics.ts';

// Governor's own health on /metrics (issue #8 §6): ingest accepted/rejected, write queue, flush
// and checkpoint latency, rejections by reason, storage per table, retention, control ticks and
// deliveries, HTTP requests, process memory. Everything here is read from counters the parts
// already keep; nothing is computed on the ingest path.

export type MetricType = 'counter' | 'gauge' | 'histogram';

export interface MetricSample {
  /** Suffix for histogram series: `_bucket`, `_sum`, `_count`; empty otherwise. */
  suffix?: string;
  labels?: Record<string, string>;
  value: number;
}

export interface MetricFamily {
  name: string;
  help: string;
  type: MetricType;
  samples: MetricSample[];
}

export interface SelfMetricsSources {
  pipeline: IngestPipeline;
  store: Store;
  retention: RetentionScheduler;
  http: HttpMetrics;
  events: EventBus;
  /** Queued/in-flight alert webhook deliveries, when the alert engine runs. */
  alertDeliveries?: () => { pending: number; inFlight: number };
  /** Queued actuator deliveries of the control loop. */
  controlPendingDeliveries?: () => number;
  /** Storage stats are expensive; they are refreshed at most this often. Default 30 s. */
  storageEveryMs?: number;
}

export interface SelfMetrics {
  collect(): Promise<MetricFamily[]>;
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

  // Counted from the event bus, so control and alerts need no metrics code of their own.
  const eventCounts = new Map<string, number>();
  const controlTicks = { count: 0 };
  const actuatorDeliveries = new Map<string, number>();
  const webhookDeliveries = new Map<string, { receiver: string; status: string; count: number }>();
  const unsubscribe = sources.events.subscribe((event) => {
    eventCounts.set(event.type, (eventCounts.get(event.type) ?? 0) + 1);
    const data = (event.data ?? {}) as Record<string, unknown>;
    if (event.type === 'control.tick') controlTicks.count++;
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
    async collect() {
      if (!storage) await refreshStorage();
      else if (Date.now() - storage.at > storageEveryMs) void refreshStorage();
      const c = sources.pipeline.counters;
      const w = sources.store.writer.stats() as ReturnType<Store['writer']['stats']> & {
        stagedRows?: number;
      };
      const families: MetricFamily[] = [
        counter('governor_ingest_spans_total', 'Spans received over OTLP, by result.', [
          { labels: { result: 'accepted' }, value: c.spansAccepted },
          { labels: { result: 'rejected' }, value: c.spansRejected },
        ]),
        counter('governor_ingest_points_total', 'Metric data points received over OTLP, by result.', [
          { labels: { result: 'accepted' }, value: c.pointsAccepted },
          { labels: { result: 'rejected' }, value: c.pointsRejected },
        ]),
        counter(
          'governor_ingest_requests_rejected_total',
          'OTLP requests refused as a whole, by reason (undecodable, queue_full, shutting_down, write_failed).',
          Object.entries(c.requestsRejected).map(([reason, value]) => ({ labels: { reason }, value })),
        ),
        gauge('governor_write_queue_rows', 'Rows waiting in the write queue.', [{ value: w.queuedRows }]),
        gauge(
          'governor_write_staged_rows',
          'Rows committed to the ingest stage during a checkpoint, not yet moved.',
          [{ value: w.stagedRows ?? 0 }],
        ),
        counter('governor_rows_written_total', 'Rows committed to DuckDB, by table.', [
          { labels: { table: 'span_store' }, value: w.spansWritten },
          { labels: { table: 'metric_store' }, value: w.metricPointsWritten },
        ]),
        counter('governor_write_flushes_total', 'Group commits of the write queue.', [{ value: w.flushes }]),
        counter(
          'governor_write_failed_flushes_total',
          'Group commits that failed (their requests got 503).',
          [{ value: w.failedFlushes }],
        ),
        gauge('governor_write_flush_last_seconds', 'Duration of the last group commit.', [
          { value: w.lastFlushMs / 1000 },
        ]),
        gauge('governor_write_flush_max_seconds', 'Longest group commit since start.', [
          { value: w.maxFlushMs / 1000 },
        ]),
        counter('governor_checkpoints_total', 'CHECKPOINTs of the database.', [{ value: w.checkpoints }]),
        gauge('governor_checkpoint_last_seconds', 'Duration of the last CHECKPOINT.', [
          { value: w.lastCheckpointMs / 1000 },
        ]),
        gauge('governor_checkpoint_max_seconds', 'Longest CHECKPOINT since start.', [
          { value: w.maxCheckpointMs / 1000 },
        ]),
      ];

      if (storage) {
        const s = storage.stats;
        families.push(
          gauge(
            'governor_table_bytes',
            'Bytes of checkpointed storage per table (rows since the last checkpoint are in the WAL).',
            s.tables.map((t) => ({ labels: { table: t.table }, value: t.bytes })),
          ),
          gauge(
            'governor_table_rows',
            'Rows per table.',
            s.tables.map((t) => ({ labels: { table: t.table }, value: t.rows })),
          ),
          gauge('governor_database_file_bytes', 'Size of governor.duckdb.', [
            { value: s.database.fileBytes },
          ]),
          gauge('governor_database_wal_bytes', 'Size of the write-ahead log.', [
            { value: s.database.walBytes },
          ]),
          gauge(
            'governor_export_bytes',
            'Bytes of exported Parquet history per table.',
            s.exports.map((e) => ({ labels: { table: e.target }, value: e.bytes })),
          ),
          gauge(
            'governor_export_files',
            'Exported Parquet files per table.',
            s.exports.map((e) => ({ labels: { table: e.target }, value: e.files })),
          ),
        );
      }
      const r = sources.retention.totals();
      families.push(
        counter(
          'governor_retention_runs_total',
          'Retention runs per table, by outcome.',
          Object.keys(r.runs).flatMap((target) => [
            {
              labels: { table: target, outcome: 'ok' },
              value: (r.runs[target] ?? 0) - (r.failures[target] ?? 0),
            },
            { labels: { table: target, outcome: 'failed' }, value: r.failures[target] ?? 0 },
          ]),
        ),
        counter(
          'governor_retention_rows_exported_total',
          'Rows exported to Parquet and deleted from the live table.',
          Object.entries(r.rowsExported).map(([target, value]) => ({ labels: { table: target }, value })),
        ),
        counter('governor_control_ticks_total', 'Control loop ticks that produced a decision pass.', [
          { value: controlTicks.count },
        ]),
        counter(
          'governor_actuator_deliveries_total',
          'Control actions handed to actuators, by outcome.',
          [...actuatorDeliveries].map(([status, value]) => ({ labels: { status }, value })),
        ),
        counter(
          'governor_webhook_delivery_events_total',
          'Alert notification delivery transitions, by receiver and status.',
          [...webhookDeliveries.values()].map((d) => ({
            labels: { receiver: d.receiver, status: d.status },
            value: d.count,
          })),
        ),
        counter(
          'governor_events_published_total',
          'Events published to GET /api/events, by type.',
          [...eventCounts].map(([type, value]) => ({ labels: { type }, value })),
        ),
      );
      if (sources.controlPendingDeliveries) {
        families.push(
          gauge('governor_actuator_deliveries_pending', 'Control actions queued or in flight to actuators.', [
            { value: sources.controlPendingDeliveries() },
          ]),
        );
      }
      if (sources.alertDeliveries) {
        const d = sources.alertDeliveries();
        families.push(
          gauge('governor_webhook_deliveries_pending', 'Alert notifications queued or in flight, by state.', [
            { labels: { state: 'queued' }, value: d.pending },
            { labels: { state: 'in_flight' }, value: d.inFlight },
          ]),
        );
      }

      const routes = sources.http.snapshot();
      families.push(
        counter(
          'governor_http_requests_total',
          'HTTP requests by method, route pattern and status.',
          routes.flatMap((rt) =>
            [...rt.byStatus].map(([status, value]) => ({
              labels: { method: rt.method, route: rt.route, status },
              value,
            })),
          ),
        ),
        {
          name: 'governor_http_request_duration_seconds',
          help: 'HTTP request latency by method and route pattern.',
          type: 'histogram',
          samples: routes.flatMap((rt) => {
            const labels = { method: rt.method, route: rt.route };
            return [
              ...sources.http.bucketsS.map((le, i) => ({
                suffix: '_bucket',
                labels: { ...labels, le: String(le) },
                value: rt.buckets[i] ?? 0,
              })),
              { suffix: '_bucket', labels: { ...labels, le: '+Inf' }, value: rt.count },
              { suffix: '_sum', labels, value: rt.sumS },
              { suffix: '_count', labels, value: rt.count },
            ];
          }),
        },
      );

      const memory = process.memoryUsage();
      families.push(
        gauge('process_resident_memory_bytes', 'Resident memory of the Governor process.', [
          { value: memory.rss },
        ]),
        gauge('nodejs_heap_used_bytes', 'V8 heap in use.', [{ value: memory.heapUsed }]),
        gauge('process_uptime_seconds', 'Seconds since the process started.', [{ value: process.uptime() }]),
      );
      return families;
    },
    close() {
      unsubscribe();
    },
  };
}

function counter(name: string, help: string, samples: MetricSample[]): MetricFamily {
  return { name, help, type: 'counter', samples };
}

function gauge(name: string, help: string, samples: MetricSample[]): MetricFamily {
  return { name, help, type: 'gauge', samples };
}

/**
 * Writes the families into a Prometheus text builder. The builder has no histogram type, so a
 * histogram is written as its classic series (`_bucket{le}`, `_sum`, `_count`) typed as counters;
 * `histogram_quantile()` reads them the same way.
 */
export function writeMetricFamilies(text: PrometheusText, families: readonly MetricFamily[]): void {
  for (const family of families) {
    if (family.type !== 'histogram') {
      const f = text.family(family.name, family.type, family.help);
      for (const s of family.samples) f.sample(s.labels ?? {}, s.value);
      continue;
    }
    for (const suffix of ['_bucket', '_sum', '_count']) {
      const f = text.family(
        `${family.name}${suffix}`,
        'counter',
        `${family.help} (histogram ${suffix.slice(1)})`,
      );
      for (const s of family.samples) if (s.suffix === suffix) f.sample(s.labels ?? {}, s.value);
    }
  }
}
