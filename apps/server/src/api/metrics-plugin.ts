import type { GovernorConfig } from '@governor/conventions';
import { parseDurationMs } from '@governor/conventions';
import { type RollupLag, type Signals, createPrometheusText, renderSignalsMetrics } from '@governor/signals';
import type { DurationHistogram, TelemetryStore } from '@governor/store';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { useZodSchemas } from './zod-validation.ts';
import type { IngestCounters } from '../otlp/ingest-pipeline.ts';
import type { MetricsRegistry } from './metrics-registry.ts';

export interface MetricsPluginOptions {
  registry: MetricsRegistry;
}

/** GET /metrics: everything registered, in the Prometheus text format 0.0.4. */
export async function metricsPlugin(app: FastifyInstance, options: MetricsPluginOptions): Promise<void> {
  useZodSchemas(app);
  app.get(
    '/metrics',
    {
      schema: {
        summary: "Prometheus metrics: the signals, governor_desired_replicas and Governor's own health",
        tags: ['system'],
        produces: ['text/plain'],
        response: {
          200: {
            description: 'Prometheus text format 0.0.4',
            content: { 'text/plain; version=0.0.4': { schema: z.string() } },
          },
        },
      },
    },
    async (_request, reply) => {
      const text = await options.registry.collect();
      reply.header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8');
      return text;
    },
  );
}

/** The four signals and their supporting figures, by pool and fleet-wide, over signals.default_window. */
export function createSignalsMetricsProvider(
  signals: Signals,
  config: GovernorConfig,
): () => Promise<string> {
  const windowMs = parseDurationMs(config.signals.default_window);
  // One read (one deadline) for the watermark and both snapshots: a scrape answers or fails in time.
  const read = () =>
    signals.read(async () => {
      const watermark = await signals.watermarkNs();
      if (watermark === null) return null;
      const [byPool, fleet] = await Promise.all([
        signals.snapshot({ windowMs, by: ['pool'], atNs: watermark }),
        signals.snapshot({ windowMs, by: [], atNs: watermark }),
      ]);
      return { watermark, byPool, fleet };
    });
  return async () => {
    const found = await read();
    if (found === null) return '';
    const { watermark, byPool, fleet } = found;
    const text = createPrometheusText();
    renderSignalsMetrics(text, {
      byPool,
      fleet,
      windowSeconds: windowMs / 1000,
      atSeconds: Number(watermark / 1_000_000n) / 1000,
    });
    return text.toString();
  };
}

/** Governor's own health: what ingest accepted and rejected, and the write queue and writer. */
export function createIngestMetricsProvider(
  counters: IngestCounters,
  store: TelemetryStore,
  rollupLag?: () => RollupLag | null,
): () => string {
  return () => {
    const text = createPrometheusText();
    const counter = (name: string, help: string, value: number) =>
      text.family(name, 'counter', help).sample({}, value);
    const gauge = (name: string, help: string, value: number) =>
      text.family(name, 'gauge', help).sample({}, value);
    counter('governor_ingest_spans_accepted_total', 'Spans accepted and committed.', counters.spansAccepted);
    counter(
      'governor_ingest_spans_rejected_total',
      'Spans rejected as invalid (partial success).',
      counters.spansRejected,
    );
    counter(
      'governor_ingest_metric_points_accepted_total',
      'Metric data points accepted and committed.',
      counters.pointsAccepted,
    );
    counter(
      'governor_ingest_metric_points_rejected_total',
      'Metric data points rejected as invalid.',
      counters.pointsRejected,
    );
    const rejected = text.family(
      'governor_ingest_requests_rejected_total',
      'counter',
      'OTLP requests refused as a whole, by reason.',
    );
    for (const [reason, n] of Object.entries(counters.requestsRejected)) rejected.sample({ reason }, n);
    const rowsRejected = text.family(
      'governor_ingest_rejected_total',
      'counter',
      'Spans and metric points refused by an intake guard (partial success), by reason: future = dated past ingest.max_future_skew.',
    );
    rowsRejected.sample({ reason: 'future' }, counters.rowsRejected.future ?? 0);
    const w = store.writer.stats();
    gauge('governor_writer_queued_rows', 'Rows accepted but not yet committed.', w.queuedRows);
    gauge(
      'governor_writer_staged_rows',
      'Rows committed to the ingest stage during a checkpoint, not yet moved.',
      w.stagedRows,
    );
    counter('governor_writer_spans_written_total', 'Spans committed to the span table.', w.spansWritten);
    counter('governor_writer_metric_points_written_total', 'Metric points committed.', w.metricPointsWritten);
    counter('governor_writer_flushes_total', 'Group commits.', w.flushes);
    gauge('governor_writer_last_flush_seconds', 'Duration of the last group commit.', w.lastFlushMs / 1000);
    gauge('governor_writer_max_flush_seconds', 'Longest group commit since start.', w.maxFlushMs / 1000);
    counter('governor_writer_checkpoints_total', 'Checkpoints of the main database.', w.checkpoints);
    counter(
      'governor_writer_failed_checkpoints_total',
      'Checkpoints that failed (retried later).',
      w.failedCheckpoints,
    );
    gauge(
      'governor_writer_last_checkpoint_seconds',
      'Duration of the last checkpoint.',
      w.lastCheckpointMs / 1000,
    );
    counter(
      'governor_writer_rejected_queue_full_total',
      'Writes refused because the queue was full.',
      w.rejectedQueueFull,
    );
    counter('governor_writer_failed_flushes_total', 'Group commits that failed.', w.failedFlushes);
    renderDurationHistogram(
      text,
      'governor_writer_flush_seconds',
      "Group commits by duration: what each acknowledgement of the group waited for; the Appender's flush is synchronous, so also how long the event loop (request intake included) was held.",
      w.flushSeconds,
    );
    renderDurationHistogram(
      text,
      'governor_writer_checkpoint_seconds',
      'Checkpoints of the main database by duration; ingest commits to the stage meanwhile and the request rollup waits.',
      w.checkpointSeconds,
    );
    const lag = rollupLag?.();
    if (lag) {
      gauge(
        'governor_rollup_lag_seconds',
        'Wall-clock time the request rollup (what signals, alerts and the control loop read) is behind ingest: 0 when it holds every written span; a checkpoint stalls it for seconds. Span exports are refused while this and governor_rollup_catch_up_seconds are past ingest.max_rollup_lag.',
        lag.ms / 1000,
      );
      gauge(
        'governor_rollup_catch_up_seconds',
        'Time the request rollup needs to take in the spans written but not yet rolled up, by the cost of its recent refreshes (a fixed cost per run plus a cost per span, fitted over the last minutes): what a read arriving now waits for. Span exports are refused while this and governor_rollup_lag_seconds are past ingest.max_rollup_lag.',
        lag.catchUpMs / 1000,
      );
      gauge(
        'governor_rollup_failing',
        '1 when the last rollup refresh failed (see the log).',
        lag.failing ? 1 : 0,
      );
    }
    return text.toString();
  };
}

/** A DurationHistogram in the exposition: cumulative `_bucket`s ending in `+Inf`, then `_sum` and `_count`. */
function renderDurationHistogram(
  text: ReturnType<typeof createPrometheusText>,
  name: string,
  help: string,
  histogram: DurationHistogram,
): void {
  const family = text.family(name, 'histogram', help);
  let cumulative = 0;
  histogram.boundsS.forEach((bound, i) => {
    cumulative += histogram.counts[i] ?? 0;
    family.sample({ le: String(bound) }, cumulative, '_bucket');
  });
  family.sample({ le: '+Inf' }, histogram.count, '_bucket');
  family.sample({}, histogram.sumS, '_sum');
  family.sample({}, histogram.count, '_count');
}
