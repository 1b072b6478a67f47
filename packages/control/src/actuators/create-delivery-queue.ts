import type { ControlAction } from '@governor/conventions';
import { deliverWithRetries } from '@governor/delivery';
import type { Actuator } from './actuator.ts';

// Deliveries run off the control loop: each actuator has its own ordered queue (scale 3→5 must not
// overtake 5→3), retries retryable failures with exponential backoff, and never blocks a tick. A dead
// actuator only delays its own queue; past `maxQueued` the oldest waiting action is dropped (and
// reported) rather than growing without bound.

export interface DeliveryOutcome {
  actionId: string;
  recommendationId: string;
  actuator: string;
  status: 'delivered' | 'failed';
  attempts: number;
  error: string | null;
  httpStatus: number | null;
}

export interface QueuedActuator {
  actuator: Actuator;
  maxAttempts: number;
  backoffMs: number;
}

export interface DeliveryQueueOptions {
  actuators: readonly QueuedActuator[];
  onOutcome: (outcome: DeliveryOutcome, action: ControlAction) => void;
  maxQueued?: number;
  /** Waits between attempts; injectable so tests can observe backoff without sleeping. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  random?: () => number;
}

export interface DeliveryQueue {
  /** Queues the action for every actuator; an action id is only ever queued once. */
  enqueue(action: ControlAction): void;
  pending(): number;
  /** Resolves once every queue is empty, or after `timeoutMs`. */
  drain(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

export function createDeliveryQueue(options: DeliveryQueueOptions): DeliveryQueue {
  const maxQueued = options.maxQueued ?? 1000;
  const random = options.random;
  const sleep = options.sleep;
  const stop = new AbortController();
  const seen = new Set<string>();
  const idleWaiters = new Set<() => void>();
  const lanes = options.actuators.map((entry) => ({ entry, queue: [] as ControlAction[], running: false }));

  const isIdle = () => lanes.every((l) => !l.running && l.queue.length === 0);
  const notifyIdle = () => {
    if (!isIdle()) return;
    for (const resolve of idleWaiters) resolve();
    idleWaiters.clear();
  };

  const deliverOne = async (entry: QueuedActuator, action: ControlAction): Promise<DeliveryOutcome> => {
    const { result, attempts } = await deliverWithRetries(
      (signal) => entry.actuator.deliver(action, signal),
      {
        maxAttempts: entry.maxAttempts,
        initialBackoffMs: entry.backoffMs,
        signal: stop.signal,
        ...(random ? { random } : {}),
        ...(sleep ? { sleep } : {}),
      },
    );
    return {
      actionId: action.id,
      recommendationId: action.recommendationId,
      actuator: entry.actuator.name,
      status: result.status === 'delivered' ? 'delivered' : 'failed',
      attempts,
      error: result.status === 'delivered' ? null : result.error,
      httpStatus: result.httpStatus,
    };
  };

  const pump = async (lane: (typeof lanes)[number]) => {
    if (lane.running) return;
    lane.running = true;
    try {
      while (lane.queue.length > 0 && !stop.signal.aborted) {
        const action = lane.queue.shift()!;
        const outcome = await deliverOne(lane.entry, action);
        options.onOutcome(outcome, action);
      }
    } finally {
      lane.running = false;
      notifyIdle();
    }
  };

  const reportDropped = (lane: (typeof lanes)[number], action: ControlAction, error: string) =>
    options.onOutcome(
      {
        actionId: action.id,
        recommendationId: action.recommendationId,
        actuator: lane.entry.actuator.name,
        status: 'failed',
        attempts: 0,
        error,
        httpStatus: null,
      },
      action,
    );

  return {
    enqueue(action) {
      if (seen.has(action.id) || stop.signal.aborted) return;
      seen.add(action.id);
      for (const lane of lanes) {
        lane.queue.push(action);
        if (lane.queue.length > maxQueued)
          reportDropped(
            lane,
            lane.queue.shift()!,
            `dropped: more than ${maxQueued} actions waiting for actuator ${lane.entry.actuator.name}`,
          );
        void pump(lane);
      }
    },
    pending() {
      return lanes.reduce((sum, l) => sum + l.queue.length + (l.running ? 1 : 0), 0);
    },
    drain(timeoutMs) {
      if (isIdle()) return Promise.resolve(true);
      return new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => {
          idleWaiters.delete(done);
          resolve(false);
        }, timeoutMs);
        timer.unref();
        const done = () => {
          clearTimeout(timer);
          resolve(true);
        };
        idleWaiters.add(done);
      });
    },
    async close() {
      stop.abort();
      // Nothing waiting vanishes unrecorded: each action still queued is reported as not delivered.
      for (const lane of lanes)
        for (const action of lane.queue.splice(0))
          reportDropped(lane, action, 'dropped: Governor shut down first');
      await this.drain(5000);
    },
  };
}
