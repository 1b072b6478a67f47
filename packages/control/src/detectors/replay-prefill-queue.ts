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
