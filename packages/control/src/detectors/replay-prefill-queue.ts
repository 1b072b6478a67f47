import type { RequestArrival } from '@governor/signals';

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
  /** Share of its tasks within the SLO (every request of a task within it, as goodput counts them). */
  withinSloShare: number;
  /** One standard error of withinSloShare (the model's binomial error of its sample of tasks). */
  uncertainty: number;
  ttftP95Ms: number;
}

export interface ReplayOutlook {
  requests: number;
  now: ReplicaOutlook;
  after: ReplicaOutlook;
}

/** A replica count and when it began serving, on the arrivals' time axis (ms). */
export interface ReplicaStep {
  fromMs: number;
  replicas: number;
}

/**
 * Waits (ms) before each request's prefill starts when `servers` replicas serve the arrivals (sorted
 * by arrival) first come, first served, each taking `serviceMs[i]` of prefill. `servers` is a count,
 * or the counts the pool served on in time order (the first from the start; a scale action within
 * the sample starts the next).
 */
export function replayPrefillWaits(
  arrivals: readonly Pick<RequestArrival, 'arriveMs'>[],
  serviceMs: ArrayLike<number>,
  servers: number | readonly ReplicaStep[],
): Float64Array {
  const steps =
    typeof servers === 'number' ? [{ fromMs: Number.NEGATIVE_INFINITY, replicas: servers }] : servers;
  // A min-heap of the times each replica is next free: O(n log c) for a pool of any size.
  let heap: Float64Array = new Float64Array(Math.max(1, Math.floor(steps[0]?.replicas ?? 1))).fill(
    Number.NEGATIVE_INFINITY,
  );
  let nextStep = 1;
  const waits = new Float64Array(arrivals.length);
  for (let i = 0; i < arrivals.length; i++) {
    const arrive = arrivals[i]!.arriveMs;
    while (nextStep < steps.length && steps[nextStep]!.fromMs <= arrive)
      heap = resize(heap, steps[nextStep++]!);
    const start = Math.max(arrive, heap[0]!);
    waits[i] = start - arrive;
    replaceMin(heap, start + serviceMs[i]!);
  }
  return waits;
}

/**
 * The replicas after the count changed at `step.fromMs`. A new replica is free from then on. A
 * replica taken away finishes what it was given (those waits are counted) and takes nothing more;
 * which one goes is the orchestrator's choice, not the load's. The one free last is taken here, so
 * the replicas left are those free sooner: the waits the replay gives the requests after the change
 * err low, what the model leaves to a request's own TTFT errs high, and its predictions with it.
 */
function resize(heap: Float64Array, step: ReplicaStep): Float64Array {
  const free = Array.from(heap).sort((a, b) => a - b);
  const n = Math.max(1, Math.floor(step.replicas));
  free.length = Math.min(free.length, n);
  while (free.length < n) free.push(step.fromMs);
  // Ascending order is a min-heap.
  return Float64Array.from(free.sort((a, b) => a - b));
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
