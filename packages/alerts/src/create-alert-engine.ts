import { randomUUID } from 'node:crypto';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import type { GovernorConfig, GroupDimension, SignalsSnapshot } from '@governor/conventions';
import { readSignalValue as readSignalValueOfSignals } from '@governor/signals';
import type { Store } from '@governor/store';
import type { AlertSourceEvent } from './alert-event.ts';
import {
  type AlertInstance,
  type AlertStep,
  advanceAlert,
  type ConditionObservation,
} from './alert-instance.ts';
import type { Notification } from './dispatch/notification.ts';
import { createNotificationDispatcher } from './dispatch/notification-dispatcher.ts';
import { createDeliveryQueue, type SendFn } from './delivery/delivery-queue.ts';
import type { DeliveryResult } from '@governor/delivery';
import { compileReceivers, type ReceiverRuntime } from './delivery/receiver-runtime.ts';
import { fingerprintLabels, formatLabels } from './labels.ts';
import type { DeliveryAttemptRecord, DeliveryRecord, DeliveryStatus } from './persistence/delivery-log.ts';
import { type AlertStateOptions, openAlertState } from './persistence/open-alert-state.ts';
import { type AlertConfigIssue, compileRules } from './rules/compile-rules.ts';
import type { CompiledEventRule, CompiledRule, SignalRule } from './rules/compiled-rule.ts';
import { evaluateSignalRule } from './rules/evaluate-signal-rules.ts';
import { matchesEventRule, observeEvent } from './rules/evaluate-event-rule.ts';
import type { AlertSignalsSource, ReadSignalValue } from './signals-source.ts';
import { msToNs, msToRfc3339 } from './time.ts';

export class AlertConfigError extends Error {
  override readonly name = 'AlertConfigError';
  constructor(readonly issues: AlertConfigIssue[]) {
    super(`invalid alerting configuration:\n${issues.map((i) => `  ${i.path}: ${i.message}`).join('\n')}`);
  }
}

export interface AlertEngineLogger {
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export interface AlertEngineOptions {
  /** Holds the alert state of a single node; not needed when `state` is given. */
  store?: Store;
  /** Alert state in PostgreSQL instead, for nodes that share it (only the leader runs the engine). */
  state?: AlertStateOptions;
  /**
   * Sends the deliveries the state holds as pending (left by the last run, or by the previous
   * leader) from creation on. Default true. A follower that builds an engine only to answer reads
   * passes false and leaves them to the leader; it still sends what it queues itself (a test-fire).
   */
  resumeDeliveries?: boolean;
  signals: AlertSignalsSource;
  /** Default: @governor/signals' readSignalValue. */
  readSignalValue?: ReadSignalValue;
  config: Pick<GovernorConfig, 'alerts' | 'receivers' | 'signals'>;
  /** Where operators reach Governor; `externalURL` of notifications. Default: alerts.external_url. */
  externalUrl?: string;
  /** For receivers' secret_env. Default: process.env. */
  env?: Record<string, string | undefined>;
  /** Wall clock (ms) for deliveries and as the fallback clock of notification timers. */
  now?: () => number;
  random?: () => number;
  send?: SendFn;
  logger?: AlertEngineLogger;
}

/** What subscribers hear: lifecycle transitions and delivery attempts. */
export type AlertEngineEvent =
  | { type: 'alert.pending' | 'alert.firing' | 'alert.resolved' | 'alert.dropped'; alert: AlertInstance }
  | { type: 'alert.delivery'; delivery: DeliveryRecord; result: DeliveryResult };

export interface EvaluationSummary {
  /** Evaluation times processed by this call. */
  evaluated: number;
  evaluatedUntilNs: bigint | null;
  /** More evaluation times have passed than one call processes; call again. */
  behind: boolean;
  notificationsQueued: number;
}

export interface DeliveryWithAttempts {
  record: DeliveryRecord;
  attempts: DeliveryAttemptRecord[];
}

export interface AlertEngine {
  readonly rules: readonly CompiledRule[];
  readonly receivers: ReadonlyMap<string, ReceiverRuntime>;
  /** Polls the watermark every poll_interval_ms and evaluates what it passed. */
  start(): void;
  /** Stops polling, waits for the running evaluation, aborts deliveries in flight (they resume after restart). */
  stop(): Promise<void>;
  /** Evaluates each evaluation time the watermark has passed since the last one, then queues due notifications. */
  evaluate(): Promise<EvaluationSummary>;
  /** A recommendation or action event for event rules. */
  recordEvent(event: AlertSourceEvent): Promise<void>;
  evaluatedUntilNs(): bigint | null;
  activeAlerts(): AlertInstance[];
  history(query: { rule?: string; fingerprint?: string; limit: number }): Promise<AlertInstance[]>;
  deliveriesForAlert(fingerprint: string, limit: number): Promise<DeliveryWithAttempts[]>;
  deliveries(query: { status?: DeliveryStatus; receiver?: string; limit: number }): Promise<DeliveryRecord[]>;
  deadLetters(query: { receiver?: string; limit: number }): Promise<DeliveryWithAttempts[]>;
  /** Sends a synthetic firing notification to one receiver and reports its (single) attempt; null if unknown. */
  testReceiver(name: string): Promise<{ record: DeliveryRecord; result: DeliveryResult } | null>;
  deliveryStats(): { pending: number; inFlight: number };
  /** Listens to transitions and delivery attempts; returns the unsubscribe function. A throwing listener is dropped. */
  subscribe(listener: (event: AlertEngineEvent) => void): () => void;
}

/** Evaluation times processed per evaluate() call before yielding to the event loop. */
const MAX_STEPS_PER_CALL = 60;

export async function createAlertEngine(options: AlertEngineOptions): Promise<AlertEngine> {
  const now = options.now ?? Date.now;
  const { config } = options;
  const compiledRules = compileRules(config);
  const compiledReceivers = compileReceivers(config.receivers, config.alerts, options.env ?? process.env);
  const issues = [...compiledRules.issues, ...compiledReceivers.issues];
  if (issues.length > 0) throw new AlertConfigError(issues);

  const rules = compiledRules.rules;
  const receivers = compiledReceivers.receivers;
  const signalRules = rules.filter((r): r is SignalRule => r.type !== 'event');
  const eventRules = rules.filter((r): r is CompiledEventRule => r.type === 'event');
  const eventRulesByName = new Map(eventRules.map((r) => [r.name, r]));
  const externalUrl = (options.externalUrl ?? config.alerts.external_url ?? 'http://127.0.0.1:4318').replace(
    /\/+$/,
    '',
  );
  const stepNs = msToNs(config.alerts.evaluation_interval_s * 1000);
  const logger = options.logger;
  const listeners = new Set<(event: AlertEngineEvent) => void>();
  const notify = (event: AlertEngineEvent) => {
    for (const listener of [...listeners]) {
      try {
        listener(event);
      } catch (error) {
        listeners.delete(listener);
        logger?.error({ err: error }, 'alert event listener failed and was removed');
      }
    }
  };
  const readSignalValue = options.readSignalValue ?? readSignalValueOfSignals;

  const { repository, deliveryLog } = await openAlertState(options, now);
  const dispatcher = createNotificationDispatcher({
    receivers: new Map([...receivers].map(([name, r]) => [name, r.timings])),
    externalUrl,
  });
  const queue = createDeliveryQueue({
    log: deliveryLog,
    receivers,
    initialBackoffMs: config.alerts.delivery.initial_backoff_ms,
    maxBackoffMs: config.alerts.delivery.max_backoff_ms,
    retryHorizonMs: config.alerts.delivery.retry_horizon_s * 1000,
    maxConcurrent: config.alerts.delivery.max_concurrent,
    now,
    random: options.random ?? Math.random,
    send: options.send,
    onAttempt: (record, result) => {
      if (record.status === 'dead' && record.kind === 'notification') {
        logger?.warn(
          { receiver: record.receiver, deliveryId: record.id, error: record.lastError },
          'alert notification is a dead letter; see GET /api/alerts/dead-letters',
        );
      }
      notify({ type: 'alert.delivery', delivery: record, result });
    },
    onError: (error, context) => logger?.error({ err: error }, `alert delivery: ${context}`),
  });

  // State restored from the last run.
  const active = new Map<string, AlertInstance>();
  for (const alert of await repository.loadActive()) active.set(alert.fingerprint, alert);
  dispatcher.load(await repository.loadGroups());
  let evaluatedUntil = await repository.loadCursor();
  let latestEventNs: bigint | null = null;
  dispatcher.reconcile(
    [...active.values()].filter((a) => a.state === 'firing'),
    evaluatedUntil ?? 0n,
    now(),
  );
  await queue.start({ resume: options.resumeDeliveries !== false });

  // Evaluation, events and notification hand-off mutate shared state; they run one at a time.
  let chain: Promise<unknown> = Promise.resolve();
  const serialized = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = chain.then(fn);
    chain = run.catch(() => undefined);
    return run;
  };

  const clockNs = (): bigint => {
    const a = evaluatedUntil ?? latestEventNs ?? 0n;
    const b = latestEventNs ?? a;
    return a > b ? a : b;
  };

  const apply = async (previous: AlertInstance | null, step: AlertStep, atNs: bigint): Promise<void> => {
    const { next, change } = step;
    if (change === null) {
      if (next) {
        active.set(next.fingerprint, next);
        if (next.state === 'firing') dispatcher.update(next, atNs, now());
      }
      return;
    }
    if (change === 'dropped') {
      if (previous) {
        active.delete(previous.fingerprint);
        await repository.remove(previous.id);
        notify({ type: 'alert.dropped', alert: previous });
      }
      return;
    }
    if (!next) return;
    if (previous === null || previous.id !== next.id) await repository.insert(next);
    else await repository.update(next);
    if (next.state === 'resolved') active.delete(next.fingerprint);
    else active.set(next.fingerprint, next);
    dispatcher.update(next, atNs, now());
    notify({ type: `alert.${change}`, alert: next });
  };

  const evaluateAt = async (atNs: bigint): Promise<void> => {
    const snapshots = new Map<string, Promise<SignalsSnapshot>>();
    const snapshotAt = (windowMs: number, by: GroupDimension[]) => {
      const key = `${windowMs}|${by.join(',')}`;
      let snapshot = snapshots.get(key);
      if (!snapshot) {
        snapshot = options.signals.snapshot({ windowMs, by, atNs });
        snapshots.set(key, snapshot);
      }
      return snapshot;
    };
    const observed = new Map<string, ConditionObservation>();
    const failedRules = new Set<string>();
    for (const rule of signalRules) {
      try {
        for (const c of await evaluateSignalRule(rule, snapshotAt, readSignalValue)) {
          observed.set(c.fingerprint, {
            fingerprint: c.fingerprint,
            rule: rule.name,
            ruleType: rule.type,
            labels: c.labels,
            annotations: c.annotations,
            receivers: rule.receivers,
            value: c.value,
            forMs: c.forMs,
          });
        }
      } catch (error) {
        // A failed query says nothing about the fleet: the rule's alerts keep their state.
        failedRules.add(rule.name);
        logger?.error({ err: error, rule: rule.name }, 'alert rule evaluation failed');
      }
    }
    for (const [fingerprint, observation] of observed) {
      const current = active.get(fingerprint) ?? null;
      await apply(current, advanceAlert(current, observation, atNs, randomUUID), atNs);
    }
    for (const alert of [...active.values()]) {
      if (observed.has(alert.fingerprint) || failedRules.has(alert.rule)) continue;
      if (alert.ruleType === 'event') {
        const rule = eventRulesByName.get(alert.rule);
        if (rule && atNs - alert.lastSeenNs < msToNs(rule.resolveAfterMs)) continue;
      }
      await apply(alert, advanceAlert(alert, null, atNs, randomUUID), atNs);
    }
  };

  const queueDueNotifications = async (): Promise<number> => {
    let queued = 0;
    for (const { notification, repeat } of dispatcher.takeDue(clockNs(), now())) {
      try {
        if (await queue.enqueue(notification, { kind: 'notification', repeat })) queued++;
      } catch (error) {
        logger?.error({ err: error, receiver: notification.receiver }, 'cannot queue alert notification');
      }
    }
    await repository.saveGroups(dispatcher.takeDirty());
    return queued;
  };

  const retentionMs = config.alerts.delivery.log_retention_h * 3_600_000;
  let lastPruneAtMs = Number.NEGATIVE_INFINITY;
  const pruneDeliveryLog = async () => {
    const nowMs = now();
    if (nowMs - lastPruneAtMs < 3_600_000) return;
    lastPruneAtMs = nowMs;
    try {
      await deliveryLog.prune(nowMs - retentionMs);
    } catch (error) {
      logger?.error({ err: error }, 'cannot prune the alert delivery log');
    }
  };

  const evaluate = () =>
    serialized(async (): Promise<EvaluationSummary> => {
      const watermark = await options.signals.watermarkNs();
      let evaluated = 0;
      let notificationsQueued = 0;
      if (watermark !== null) {
        let cursor = evaluatedUntil ?? (watermark / stepNs) * stepNs - stepNs;
        while (cursor + stepNs <= watermark && evaluated < MAX_STEPS_PER_CALL) {
          cursor += stepNs;
          await traceEvaluation(cursor, signalRules.length, evaluateAt);
          evaluatedUntil = cursor;
          evaluated++;
          // Per step, so what is notified does not depend on how many steps one call catches up.
          notificationsQueued += await queueDueNotifications();
        }
        if (evaluated > 0) await repository.saveCursor(cursor);
      }
      // Timers may also have run out on the wall clock, or event rules may have fired.
      if (evaluated === 0) notificationsQueued += await queueDueNotifications();
      await pruneDeliveryLog();
      return {
        evaluated,
        evaluatedUntilNs: evaluatedUntil,
        behind: watermark !== null && evaluatedUntil !== null && evaluatedUntil + stepNs <= watermark,
        notificationsQueued,
      };
    });

  const recordEvent = (event: AlertSourceEvent) =>
    serialized(async () => {
      if (latestEventNs === null || event.atNs > latestEventNs) latestEventNs = event.atNs;
      for (const rule of eventRules) {
        if (!matchesEventRule(rule, event)) continue;
        const observation = observeEvent(rule, event);
        const current = active.get(observation.fingerprint) ?? null;
        const atNs = current && current.lastSeenNs > event.atNs ? current.lastSeenNs : event.atNs;
        const step = advanceAlert(current, observation, atNs, randomUUID);
        await apply(current, step, atNs);
        // lastSeen decides when the alert resolves, so it must survive a restart.
        if (step.change === null && step.next) await repository.update(step.next);
      }
    });

  const withAttempts = async (records: DeliveryRecord[]): Promise<DeliveryWithAttempts[]> => {
    const attempts = await deliveryLog.attempts(records.map((r) => r.id));
    return records.map((record) => ({
      record,
      attempts: attempts.filter((a) => a.deliveryId === record.id),
    }));
  };

  let pollTimer: NodeJS.Timeout | null = null;
  let stopping = false;

  return {
    rules,
    receivers,
    start() {
      if (pollTimer || stopping) return;
      const poll = async () => {
        let behind = false;
        try {
          behind = (await evaluate()).behind;
        } catch (error) {
          logger?.error({ err: error }, 'alert evaluation failed; retrying at the next poll');
        }
        if (!stopping) {
          pollTimer = setTimeout(poll, behind ? 0 : config.alerts.poll_interval_ms);
          pollTimer.unref();
        }
      };
      pollTimer = setTimeout(poll, 0);
      pollTimer.unref();
    },
    async stop() {
      stopping = true;
      if (pollTimer) clearTimeout(pollTimer);
      await chain;
      await queue.stop();
    },
    evaluate,
    recordEvent,
    evaluatedUntilNs: () => evaluatedUntil,
    activeAlerts: () =>
      [...active.values()].sort(
        (a, b) =>
          (a.activeAtNs < b.activeAtNs ? -1 : a.activeAtNs > b.activeAtNs ? 1 : 0) ||
          formatLabels(a.labels).localeCompare(formatLabels(b.labels)),
      ),
    history: (query) => repository.history(query),
    async deliveriesForAlert(fingerprint, limit) {
      return withAttempts(await deliveryLog.byFingerprint(fingerprint, limit));
    },
    deliveries: (query) => deliveryLog.recent(query),
    async deadLetters(query) {
      return withAttempts(await deliveryLog.deadLetters(query));
    },
    async testReceiver(name) {
      if (!receivers.has(name)) return null;
      const nowMs = now();
      const labels = { alertname: 'GovernorTestNotification', severity: 'none', receiver: name };
      const fingerprint = fingerprintLabels(labels);
      const notification: Notification = {
        receiver: name,
        groupKey: `governor/${name}:test`,
        groupLabels: { alertname: labels.alertname },
        status: 'firing',
        alerts: [
          {
            fingerprint,
            status: 'firing',
            labels,
            annotations: {
              summary: `Test notification from Governor to receiver "${name}"; no action needed.`,
            },
            startsAt: msToRfc3339(nowMs),
            endsAt: null,
            generatorUrl: `${externalUrl}/api/alerts`,
            value: null,
          },
        ],
        truncatedAlerts: 0,
        externalUrl,
        at: msToRfc3339(nowMs),
      };
      const id = randomUUID();
      const attempt = queue.nextAttempt(id);
      attempt.catch(() => undefined); // awaited below; this only keeps a failed enqueue from leaving it unhandled
      if (!(await queue.enqueue(notification, { kind: 'test', id }))) {
        throw new Error('alerting is stopping; test the receiver again once Governor is up');
      }
      return attempt;
    },
    deliveryStats: () => queue.stats(),
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
  };
}

/** One evaluation time as a span of Governor's own traces (a no-op unless the server started self-tracing). */
function traceEvaluation(
  atNs: bigint,
  rules: number,
  evaluateAt: (atNs: bigint) => Promise<void>,
): Promise<void> {
  const attributes = {
    'governor.alerts.at': msToRfc3339(Number(atNs / 1_000_000n)),
    'governor.alerts.rules': rules,
  };
  // Looked up per call, not once per module: a restarted SDK (tests) registers a new provider.
  return trace
    .getTracer('@governor/alerts')
    .startActiveSpan('governor.alerts.evaluate', { attributes }, async (span) => {
      try {
        await evaluateAt(atNs);
      } catch (error) {
        span.recordException(error as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
        throw error;
      } finally {
        span.end();
      }
    });
}
