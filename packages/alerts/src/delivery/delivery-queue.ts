import { randomUUID } from 'node:crypto';
import { type DeliveryResult, retryDelayMs } from '@governor/delivery';
import type { Notification } from '../dispatch/notification.ts';
import {
  attemptOutcome,
  type DeliveryClaim,
  type DeliveryKind,
  type DeliveryLog,
  type DeliveryRecord,
} from '../persistence/delivery-log.ts';
import type { ReceiverRuntime } from './receiver-runtime.ts';
import { sendNotification } from './send-notification.ts';

// Deliveries run here, apart from evaluation: enqueue only writes the outbox row and returns, so a
// slow or dead receiver never holds up evaluation, ingest or the control loop. Each receiver×group
// is a lane delivered strictly in order (a "resolved" never overtakes its "firing"); lanes run in
// parallel up to max_concurrent. Retries back off exponentially with jitter until the retry
// horizon, then the notification becomes a dead letter. Pending rows survive a restart.
// With a log shared by several nodes, each attempt is claimed first: a leader that took over then
// waits while the deposed leader is still sending a delivery, and skips what that one finished.

export type SendFn = (
  receiver: ReceiverRuntime,
  notification: Notification,
  context: { deliveryId: string; nowWallMs: number; signal: AbortSignal },
) => Promise<DeliveryResult>;

export interface DeliveryQueueOptions {
  log: DeliveryLog;
  receivers: ReadonlyMap<string, ReceiverRuntime>;
  initialBackoffMs: number;
  maxBackoffMs: number;
  retryHorizonMs: number;
  maxConcurrent: number;
  now: () => number;
  random: () => number;
  send?: SendFn;
  /**
   * A shared log's claim on an attempt outlasts the receiver's timeout by this much, for the
   * attempt to be recorded. Default 10 s.
   */
  claimMarginMs?: number;
  /** After each attempt (delivered, dead or scheduled for retry). */
  onAttempt?: (record: DeliveryRecord, result: DeliveryResult) => void;
  /** Background failures (e.g. the delivery log could not be written). */
  onError?: (error: unknown, context: string) => void;
}

export interface DeliveryQueue {
  /**
   * Starts numbering after the log's last delivery and, unless `resume` is false, reloads the
   * deliveries left pending by a previous run (or another node) and sends them.
   */
  start(options?: { resume?: boolean }): Promise<void>;
  /**
   * Writes the notification to the outbox and returns at once. A `repeat` is skipped (null) when
   * the lane still holds an undelivered notification, which carries the same state.
   */
  enqueue(
    notification: Notification,
    options: { kind: DeliveryKind; repeat?: boolean; id?: string },
  ): Promise<DeliveryRecord | null>;
  /** Resolves with the record after the delivery's next attempt; rejects if the queue stops first. */
  nextAttempt(id: string): Promise<{ record: DeliveryRecord; result: DeliveryResult }>;
  /** Aborts sends in flight (they stay pending and resume after a restart) and cancels timers. */
  stop(): Promise<void>;
  stats(): { pending: number; inFlight: number };
}

interface Lane {
  key: string;
  items: DeliveryRecord[];
  busy: boolean;
  timer: NodeJS.Timeout | null;
}

/** How soon a delivery another node holds is asked for again. */
const HELD_RECHECK_MS = 1_000;

function laneKey(record: Pick<DeliveryRecord, 'kind' | 'id' | 'receiver' | 'groupKey'>): string {
  return record.kind === 'test' ? `test\u0000${record.id}` : `${record.receiver}\u0000${record.groupKey}`;
}

export function createDeliveryQueue(options: DeliveryQueueOptions): DeliveryQueue {
  const send = options.send ?? sendNotification;
  const lanes = new Map<string, Lane>();
  const waitingForSlot: string[] = [];
  const inFlight = new Set<Promise<void>>();
  interface AttemptWaiter {
    resolve: (value: { record: DeliveryRecord; result: DeliveryResult }) => void;
    reject: (error: Error) => void;
  }
  const attemptWaiters = new Map<string, AttemptWaiter[]>();
  const stopController = new AbortController();
  let stopped = false;
  let seq = 0;

  const reportError = (error: unknown, context: string) => options.onError?.(error, context);

  const schedule = (key: string, timerFired = false): void => {
    const lane = lanes.get(key);
    if (!lane || lane.busy || stopped) return;
    const head = lane.items[0];
    if (!head) {
      if (lane.timer) clearTimeout(lane.timer);
      lanes.delete(key);
      return;
    }
    const waitMs = (head.nextAttemptAtMs ?? 0) - options.now();
    if (!timerFired && waitMs > 0) {
      if (lane.timer) clearTimeout(lane.timer);
      lane.timer = setTimeout(() => {
        lane.timer = null;
        schedule(key, true);
      }, waitMs);
      return;
    }
    if (inFlight.size >= options.maxConcurrent) {
      if (!waitingForSlot.includes(key)) waitingForSlot.push(key);
      return;
    }
    lane.busy = true;
    const run = attempt(lane, head).finally(() => {
      inFlight.delete(run);
      lane.busy = false;
      schedule(key);
      const next = waitingForSlot.shift();
      if (next !== undefined) schedule(next, true);
    });
    inFlight.add(run);
  };

  const claim = async (record: DeliveryRecord, timeoutMs: number): Promise<DeliveryClaim> => {
    if (!options.log.claim) return { status: 'claimed', record };
    try {
      return await options.log.claim(record.id, timeoutMs + (options.claimMarginMs ?? 10_000));
    } catch (error) {
      reportError(error, `claiming delivery ${record.id}`);
      return { status: 'held', retryInMs: options.initialBackoffMs };
    }
  };
  const release = (id: string) =>
    options.log.release?.(id).catch((error) => reportError(error, `releasing delivery ${id}`));

  const attempt = async (lane: Lane, queued: DeliveryRecord): Promise<void> => {
    const receiver = options.receivers.get(queued.receiver);
    const claimed = await claim(queued, receiver?.timeoutMs ?? 0);
    if (claimed.status === 'gone') {
      lane.items.shift();
      const stale = new Error(`delivery ${queued.id} was finished by another Governor node`);
      for (const waiter of attemptWaiters.get(queued.id) ?? []) waiter.reject(stale);
      attemptWaiters.delete(queued.id);
      return;
    }
    if (claimed.status === 'held') {
      // Asked again within a second, not only when the claim runs out: a holder that stopped
      // releases it at once.
      const retryInMs = Math.min(claimed.retryInMs, HELD_RECHECK_MS);
      lane.items[0] = { ...queued, nextAttemptAtMs: options.now() + retryInMs };
      return;
    }
    const record = claimed.record;
    if (stopped) {
      await release(record.id);
      return;
    }
    if (record.attempts !== queued.attempts && (record.nextAttemptAtMs ?? 0) > options.now()) {
      // Another node made attempts since this queue loaded the delivery; its backoff stands.
      lane.items[0] = record;
      return;
    }
    const startedAtMs = options.now();
    const started = performance.now();
    let result: DeliveryResult;
    if (!receiver) {
      result = {
        status: 'failed',
        httpStatus: null,
        error: `receiver "${record.receiver}" is no longer configured; add it back under receivers: to deliver`,
      };
    } else {
      try {
        result = await send(receiver, record.notification, {
          deliveryId: record.id,
          nowWallMs: startedAtMs,
          signal: stopController.signal,
        });
      } catch (error) {
        result = { status: 'retryable', afterMs: null, httpStatus: null, error: (error as Error).message };
      }
    }
    if (stopped) {
      // Aborted by stop(): stays pending in the outbox, free for the next leader at once.
      await release(record.id);
      return;
    }
    const durationMs = performance.now() - started;
    const finishedAtMs = options.now();
    const attempts = record.attempts + 1;
    const after: DeliveryRecord = {
      ...record,
      attempts,
      lastAttemptAtMs: startedAtMs,
      lastHttpStatus: result.httpStatus,
      lastError: result.status === 'delivered' ? null : result.error,
    };
    if (result.status === 'delivered') {
      Object.assign(after, { status: 'delivered', finishedAtMs, nextAttemptAtMs: null });
    } else if (result.status === 'failed') {
      Object.assign(after, { status: 'dead', finishedAtMs, nextAttemptAtMs: null });
    } else if (record.kind === 'test' || finishedAtMs >= record.retryUntilMs) {
      const why = record.kind === 'test' ? 'test notifications are not retried' : 'retry horizon reached';
      Object.assign(after, {
        status: 'dead',
        finishedAtMs,
        nextAttemptAtMs: null,
        lastError: `${result.error} (${why} after ${attempts} attempt${attempts === 1 ? '' : 's'})`,
      });
    } else {
      const delayMs = retryDelayMs(attempts, result, options, options.random);
      // The last try lands on the horizon itself, so a receiver back just in time still gets it.
      Object.assign(after, { nextAttemptAtMs: Math.min(finishedAtMs + delayMs, record.retryUntilMs) });
    }
    try {
      await options.log.recordAttempt(
        {
          deliveryId: record.id,
          attempt: attempts,
          startedAtMs,
          durationMs,
          outcome: attemptOutcome(result),
          httpStatus: result.httpStatus,
          error: result.status === 'delivered' ? null : result.error,
          retryAfterMs: result.status === 'retryable' ? result.afterMs : null,
        },
        after,
      );
    } catch (error) {
      reportError(error, `recording attempt ${attempts} of delivery ${record.id}`);
    }
    if (after.status === 'pending') lane.items[0] = after;
    else lane.items.shift();
    options.onAttempt?.(after, result);
    const waiters = attemptWaiters.get(record.id);
    attemptWaiters.delete(record.id);
    for (const waiter of waiters ?? []) waiter.resolve({ record: after, result });
  };

  const add = (record: DeliveryRecord) => {
    const key = laneKey(record);
    let lane = lanes.get(key);
    if (!lane) {
      lane = { key, items: [], busy: false, timer: null };
      lanes.set(key, lane);
    }
    lane.items.push(record);
    if (lane.items.length === 1) schedule(key);
  };

  return {
    async start({ resume = true } = {}) {
      seq = await options.log.maxSeq();
      if (resume) for (const record of await options.log.pending()) add(record);
    },

    async enqueue(notification, { kind, repeat = false, id = randomUUID() }) {
      if (stopped) return null;
      const receiver = options.receivers.get(notification.receiver);
      const lane = lanes.get(
        laneKey({ kind, id: '', receiver: notification.receiver, groupKey: notification.groupKey }),
      );
      if (repeat && lane && lane.items.length > 0) return null;
      const createdAtMs = options.now();
      const record: DeliveryRecord = {
        id,
        seq: ++seq,
        kind,
        receiver: notification.receiver,
        receiverType: receiver?.type ?? 'unknown',
        groupKey: notification.groupKey,
        notificationStatus: notification.status,
        fingerprints: notification.alerts.map((a) => a.fingerprint),
        notification,
        status: 'pending',
        attempts: 0,
        createdAtMs,
        retryUntilMs: createdAtMs + (kind === 'test' ? 0 : options.retryHorizonMs),
        nextAttemptAtMs: createdAtMs,
        lastAttemptAtMs: null,
        finishedAtMs: null,
        lastHttpStatus: null,
        lastError: null,
      };
      record.seq = await options.log.insert(record);
      add(record);
      return record;
    },

    nextAttempt(id) {
      return new Promise((resolve, reject) => {
        const list = attemptWaiters.get(id) ?? [];
        list.push({ resolve, reject });
        attemptWaiters.set(id, list);
      });
    },

    async stop() {
      stopped = true;
      stopController.abort();
      for (const lane of lanes.values()) if (lane.timer) clearTimeout(lane.timer);
      await Promise.allSettled([...inFlight]);
      const stopping = new Error('alerting is stopping; the delivery resumes after restart');
      for (const waiters of attemptWaiters.values()) for (const waiter of waiters) waiter.reject(stopping);
      attemptWaiters.clear();
    },

    stats() {
      let pending = 0;
      for (const lane of lanes.values()) pending += lane.items.length;
      return { pending, inFlight: inFlight.size };
    },
  };
}
