import type { GovernorConfig } from '@governor/conventions';
import type { RollupLag } from '@governor/signals';
import type { RetentionPolicy, RetentionReport, TelemetryStore } from '@governor/store';
import type { FastifyBaseLogger } from 'fastify';

// Once started, runs retention right away and every `retention.run_interval_s`, one run at a
// time; `runNow` is what POST /api/retention/run and `governor retention run` call.

export interface RetentionScheduler {
  readonly policy: RetentionPolicy;
  readonly enabled: boolean;
  /** Starts the timer (when a TTL is configured) with a first run right away. */
  start(log: FastifyBaseLogger): void;
  /** Runs now, or joins the run in progress. */
  runNow(): Promise<RetentionReport>;
  last(): RetentionReport | null;
  nextRunAt(): Date | null;
  /** Counters for /metrics: runs and rows by target and outcome. */
  totals(): {
    runs: Record<string, number>;
    rowsExported: Record<string, number>;
    failures: Record<string, number>;
  };
  stop(): Promise<void>;
}

export function retentionPolicyFrom(config: GovernorConfig): RetentionPolicy {
  const r = config.retention;
  return {
    ttlHours: {
      spans: r.spans_ttl_hours,
      metric_points: r.metric_points_ttl_hours ?? r.spans_ttl_hours,
      request_facts: r.rollups_ttl_hours,
    },
  };
}

/** How far behind the request rollup may be when a retention slice starts (see `yieldToRollup`). */
export interface RollupLagSource {
  /** Retention goes by the wall-clock lag (a checkpoint's stall counts, see yieldToRollup). */
  rollupLag(): Pick<RollupLag, 'ms' | 'failing'> | null;
}

/**
 * Retention is deferrable, the request rollup is not: while the rollup is more than a third of
 * ingest.max_rollup_lag behind by the wall clock (falling behind, or stalled by a checkpoint that a
 * slice would compete with for the CPU, and whose deletes make the next one longer), a slice waits — at
 * most `maxWaitMs`, after which it runs anyway (a fleet that never lets the rollup catch up must
 * still not fill the disk). A failing rollup does not hold retention up.
 */
export function yieldToRollup(
  signals: RollupLagSource,
  maxLagMs: number,
  maxWaitMs = 60_000,
  pollMs = 250,
  signal?: AbortSignal,
): () => Promise<void> {
  return async () => {
    const until = performance.now() + maxWaitMs;
    for (;;) {
      const lag = signals.rollupLag();
      if (!lag || lag.failing || lag.ms <= maxLagMs / 3 || performance.now() >= until) return;
      if (signal?.aborted) return;
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  };
}

/**
 * `yieldTo`, given, builds the wait before each slice from the scheduler's stop signal (see
 * yieldToRollup): stopping ends the wait and the run after the slice in progress.
 */
export function createRetentionScheduler(
  store: TelemetryStore,
  config: GovernorConfig,
  yieldTo?: (signal: AbortSignal) => () => Promise<void>,
): RetentionScheduler {
  const stopping = new AbortController();
  const policy: RetentionPolicy = {
    ...retentionPolicyFrom(config),
    signal: stopping.signal,
    ...(yieldTo ? { beforeSlice: yieldTo(stopping.signal) } : {}),
  };
  const enabled =
    Object.values(policy.ttlHours).some((h) => (h ?? 0) > 0) &&
    (store.exportDir !== null || store.engine === 'clickhouse');
  const intervalMs = config.retention.run_interval_s * 1000;
  let running: Promise<RetentionReport> | null = null;
  let last: RetentionReport | null = null;
  let next: Date | null = null;
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  let log: FastifyBaseLogger | null = null;
  const runs: Record<string, number> = {};
  const rowsExported: Record<string, number> = {};
  const failures: Record<string, number> = {};

  const runNow = () => {
    running ??= store
      .runRetention(policy)
      .then((report) => {
        last = report;
        for (const t of report.targets) {
          if (t.status === 'skipped') continue;
          runs[t.target] = (runs[t.target] ?? 0) + 1;
          rowsExported[t.target] = (rowsExported[t.target] ?? 0) + t.rowsExported;
          if (t.status === 'failed') {
            failures[t.target] = (failures[t.target] ?? 0) + 1;
            log?.error(
              { target: t.target, error: t.error, runId: report.runId },
              'retention run failed; nothing was deleted',
            );
          } else if (t.rowsExported > 0) {
            log?.info(
              {
                target: t.target,
                rows: t.rowsExported,
                files: t.files.length,
                bytes: t.bytesExported,
                runId: report.runId,
              },
              `retention exported ${t.rowsExported} ${t.target} rows to Parquet and deleted them from the live table`,
            );
          }
        }
        return report;
      })
      .finally(() => {
        running = null;
      });
    return running;
  };

  const schedule = () => {
    if (stopped || !enabled) return;
    next = new Date(Date.now() + intervalMs);
    timer = setTimeout(() => {
      runNow()
        .catch((error: unknown) => log?.error({ err: error }, 'retention run failed'))
        .finally(schedule);
    }, intervalMs);
    timer.unref();
  };

  return {
    policy,
    enabled,
    start(logger) {
      log = logger;
      if (!enabled || stopped) return;
      // First run right away: a Governor restarted more often than the interval still trims.
      runNow()
        .catch((error: unknown) => log?.error({ err: error }, 'retention run failed'))
        .finally(schedule);
    },
    runNow,
    last: () => last,
    nextRunAt: () => next,
    totals: () => ({ runs: { ...runs }, rowsExported: { ...rowsExported }, failures: { ...failures } }),
    async stop() {
      stopped = true;
      stopping.abort();
      if (timer) clearTimeout(timer);
      next = null;
      if (running) await running.catch(() => undefined);
    },
  };
}
