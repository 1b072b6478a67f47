import type { RequestArrival } from '@governor/signals';
import { quantileCont } from '@governor/conventions';

// Would N−k replicas hold the SLO? Not a question the mean load answers: a vLLM replica prefills in
// arrival order (chunked prefill gives the batch's token budget to the oldest prompt first), so one
// long prompt holds up every prompt behind it on that replica. With heavy-tailed prompts a load two
// replicas carry easily breaks the SLO on one. So the pool's own recent requests are replayed — same
// arrivals, same prompts — on the replica count in question: each replica a first-come-first-served
// server of prefill work, each request going to the replica that is free first. The replay's extra
// wait per request is added to the TTFT that request really had, so what the model leaves out
// (routing, decode interference) stays as it was measured.

/** What the pool's sample of requests would see on a number of replicas. */
export interface ReplicaOutlook {
  replicas: number;
  /** Share of the requests whose TTFT is within the SLO. */
  withinSloShare: number;
  ttftP95Ms: number;
}

export interface ReplayOutlook {
  requests: number;
  now: ReplicaOutlook;
  after: ReplicaOutlook;
}

/**
 * Waits (ms) before each request's prefill starts when `servers` replicas serve the arrivals (sorted
 * by arrival) first come, first served, each taking `serviceMs[i]` of prefill.
 */
export function replayPrefillWaits(
  arrivals: readonly Pick<RequestArrival, 'arriveMs'>[],
  serviceMs: ArrayLike<number>,
  servers: number,
): Float64Array {
  // A min-heap of the times each replica is next free: O(n log c) for a pool of any size.
  const heap = new Float64Array(Math.max(1, Math.floor(servers))).fill(Number.NEGATIVE_INFINITY);
  const waits = new Float64Array(arrivals.length);
  for (let i = 0; i < arrivals.length; i++) {
    const arrive = arrivals[i]!.arriveMs;
    const start = Math.max(arrive, heap[0]!);
    waits[i] = start - arrive;
    replaceMin(heap, start + serviceMs[i]!);
  }
  return waits;
}

/** Replaces the heap's smallest value and restores the heap order. */
function replaceMin(heap: Float64Array, value: number): void {
  let i = 0;
  for (;;) {
    const left = 2 * i + 1;
    if (left >= heap.length) break;
    const right = left + 1;
    const child = right < heap.length && heap[right]! < heap[left]! ? right : left;
    if (heap[child]! >= value) break;
    heap[i] = heap[child]!;
    i = child;
  }
  heap[i] = value;
}

/**
 * The pool's requests replayed on `nowReplicas` and on `afterReplicas`, each prefill taking
 * `msPerToken` per uncached prompt token (the pool's uncontended speed). A request is within the SLO
 * when its TTFT meets `sloMs` and its e2e (moved by the same extra wait) meets `e2eSloMs`, each where
 * given. Null without requests.
 */
export function replayAtReplicas(
  arrivals: readonly RequestArrival[],
  options: {
    nowReplicas: number;
    afterReplicas: number;
    msPerToken: number;
    sloMs: number | null;
    e2eSloMs?: number | null;
  },
): ReplayOutlook | null {
  const { nowReplicas, afterReplicas, msPerToken } = options;
  if (arrivals.length === 0 || nowReplicas < 1 || afterReplicas < 1) return null;
  const service = Float64Array.from(arrivals, (a) => a.uncachedTokens * msPerToken);
  const before = replayPrefillWaits(arrivals, service, nowReplicas);
  const after = replayPrefillWaits(arrivals, service, afterReplicas);
  const extra = Float64Array.from(arrivals, (_, i) => Math.max(0, after[i]! - before[i]!));
  const limits = {
    ttftMs: options.sloMs ?? Number.POSITIVE_INFINITY,
    e2eMs: options.e2eSloMs ?? Number.POSITIVE_INFINITY,
  };
  return {
    requests: arrivals.length,
    now: outlook(nowReplicas, arrivals, new Float64Array(arrivals.length), limits),
    after: outlook(afterReplicas, arrivals, extra, limits),
  };
}

function outlook(
  replicas: number,
  arrivals: readonly RequestArrival[],
  extraMs: Float64Array,
  limits: { ttftMs: number; e2eMs: number },
): ReplicaOutlook {
  const ttftMs = Float64Array.from(arrivals, (a, i) => a.ttftMs + extraMs[i]!);
  let within = 0;
  for (let i = 0; i < arrivals.length; i++) {
    const e2e = arrivals[i]!.e2eMs;
    // A request without a measured e2e is judged on its TTFT alone.
    const e2eOk = e2e === undefined || !Number.isFinite(e2e) || e2e + extraMs[i]! <= limits.e2eMs;
    if (ttftMs[i]! <= limits.ttftMs && e2eOk) within += 1;
  }
  // quantile_cont, as the signals, the simulator and the pool model compute a p95.
  return { replicas, withinSloShare: within / arrivals.length, ttftP95Ms: quantileCont(ttftMs, 0.95) };
}
