import type { GovernorConfig } from '@governor/conventions';
import type { RetentionPolicy, RetentionReport, Store } from '@governor/store';
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

export function createRetentionScheduler(store: Store, config: GovernorConfig): RetentionScheduler {
  const policy = retentionPolicyFrom(config);
  const enabled = Object.values(policy.ttlHours).some((h) => (h ?? 0) > 0) && store.exportDir !== null;
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
      if (timer) clearTimeout(timer);
      next = null;
      if (running) await running.catch(() => undefined);
    },
  };
}
