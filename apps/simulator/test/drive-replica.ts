import { createEventQueue } from '../src/engine/event-queue.ts';
import { buildPoolSpec } from '../src/fleet/fleet-spec.ts';
import type { PoolSpecInput } from '../src/fleet/fleet-spec.ts';
import { completeStep, createReplica, enqueueSeq } from '../src/fleet/replica-engine.ts';
import type { Replica, ReplicaHost, RuntimeSeq } from '../src/fleet/replica-engine.ts';
import type { PrefixBlocks } from '../src/workload/workload-types.ts';

// Runs one real replica engine on its own event queue, for tests of batching, queueing and timing.

export function createSeq(promptTokens: number, outputTokens: number, prefix?: PrefixBlocks): RuntimeSeq {
  return {
    promptTokens,
    outputTokens,
    prefix,
    phase: 'new',
    arriveMs: -1,
    admitMs: -1,
    firstTokenMs: -1,
    lastTokenMs: -1,
    generated: 0,
    prefillRemaining: 0,
    chunk: 0,
    cachedTokens: 0,
    kvTokens: 0,
    failAtToken: -1,
    failErrorType: '',
    preemptions: 0,
    queueDepthAtArrival: 0,
    kvUsageAtAdmission: 0,
    batchSizeAtAdmission: 0,
    aborted: false,
  };
}

export interface ReplicaDriver {
  replica: Replica;
  finished: Array<{ seq: RuntimeSeq; atMs: number; errorType: string | null }>;
  /** Enqueues `seq` at `atMs`. */
  arrive(seq: RuntimeSeq, atMs: number): void;
  /** Processes events up to `untilMs` (all of them by default). */
  run(untilMs?: number): void;
  /** Processes events until `condition` holds (or none are left); returns whether it holds. */
  runUntil(condition: () => boolean): boolean;
  readonly nowMs: number;
}

export function driveReplica(
  pool: Partial<PoolSpecInput> & Pick<PoolSpecInput, 'gpuType' | 'model'>,
): ReplicaDriver {
  const spec = buildPoolSpec({ name: 'test-pool', region: 'test', ...pool });
  type Ev = { kind: 'step'; version: number } | { kind: 'arrive'; seq: RuntimeSeq };
  const queue = createEventQueue<Ev>();
  let nowMs = 0;
  const finished: ReplicaDriver['finished'] = [];
  const replica = createReplica('test-pool-0', spec.name, spec, 'running', 0);
  const host: ReplicaHost = {
    scheduleStep: (r, atMs) => queue.push(atMs, { kind: 'step', version: r.version }),
    getSlowdown: () => 1,
    onAdmit: () => {},
    onFinished: (_r, seq, atMs, errorType) => finished.push({ seq, atMs, errorType }),
    onIdle: () => {},
  };
  return {
    replica,
    finished,
    arrive(seq, atMs) {
      queue.push(atMs, { kind: 'arrive', seq });
    },
    run(untilMs = Number.POSITIVE_INFINITY) {
      while (queue.size > 0 && queue.peekTimeMs() <= untilMs) {
        const event = queue.pop()!;
        nowMs = event.timeMs;
        if (event.payload.kind === 'arrive') enqueueSeq(host, replica, event.payload.seq, nowMs);
        else completeStep(host, replica, event.payload.version, nowMs);
      }
    },
    runUntil(condition) {
      while (!condition() && queue.size > 0) this.run(queue.peekTimeMs());
      return condition();
    },
    get nowMs() {
      return nowMs;
    },
  };
}
