import type { RequestArrival } from '@governor/signals';

// A pool's prefix cache is its replicas' free KV blocks (vLLM's automatic prefix caching keeps a
// finished request's blocks until their room is needed, least recently used first), and a router that
// scores prefixes (llm-d's EPP) sends a task back to the replica that holds its context. So fewer
// replicas hold fewer of the contexts its tasks come back to: a request whose task's context was
// evicted prefills it again. On a pool whose sessions carry long contexts (an agent's 100K-token
// transcript), that recompute, not the request's own new tokens, is most of its prefill.
//
// The model follows an LRU cache: a request finds its task's context when fewer distinct tokens than
// the cache holds were touched since its task's last request — the other tasks' contexts in between
// (their latest KV, prompt and output), its stack distance. Only a task's own context is modelled
// (the KV its previous request in the sample held); prefixes many tasks share (a system prompt) stay
// hot however few the replicas, and a task's first request in the sample is left as measured. The
// cache holds, across the pool, what its replicas' KV does not hold for requests being served.

/** What the sample says about the prefixes its requests reused. */
export interface PrefixReuse {
  /**
   * Per request: the tokens of its task's own context it found cached (its cached prompt tokens, at
   * most what its task's previous request held); 0 where none, or its task has no earlier request.
   */
  reused: Float64Array;
  /**
   * Per request: its task's context and the distinct tokens of other tasks' contexts touched since its
   * task's last request (the LRU stack distance).
   */
  distance: Float64Array;
}

/**
 * Null where no request reused its task's context (or none says what it found cached). `sampleScale`:
 * requests the pool received per request in the sample (head sampling); the other tasks touched in
 * between are that many times what the sample shows.
 */
export function measurePrefixReuse(arrivals: readonly RequestArrival[], sampleScale = 1): PrefixReuse | null {
  const n = arrivals.length;
  const reused = new Float64Array(n);
  const distance = new Float64Array(n);
  // Each task's latest request so far holds its context; a Fenwick tree over the sample's positions
  // holds that context's KV tokens at its latest position only, so the sum over the positions between
  // a task's two requests counts each other task touched in between once, at its latest context — the
  // stack distance in O(log n) a request instead of a scan back over the sample.
  const latest = new Fenwick(n);
  const last = new Map<number, number>();
  let any = false;
  for (let i = 0; i < n; i++) {
    const a = arrivals[i]!;
    const task = a.task ?? -1 - i;
    const prev = last.get(task);
    last.set(task, i);
    if (prev !== undefined) {
      const held = arrivals[prev]!.kvTokens ?? 0;
      reused[i] = a.cachedTokens! > 0 ? Math.min(a.cachedTokens!, held) : 0;
      if (reused[i]! > 0) {
        any = true;
        // Its own context must fit too.
        distance[i] = held + sampleScale * (latest.sumBefore(i) - latest.sumBefore(prev + 1));
      }
      latest.add(prev, -held);
    }
    latest.add(i, a.kvTokens ?? 0);
  }
  return any ? { reused, distance } : null;
}

/** Sums over a prefix of positions, with point updates (a binary indexed tree). */
class Fenwick {
  private readonly tree: Float64Array;
  constructor(size: number) {
    this.tree = new Float64Array(size + 1);
  }
  add(position: number, value: number): void {
    for (let k = position + 1; k < this.tree.length; k += k & -k) this.tree[k]! += value;
  }
  /** The sum over positions [0, end). */
  sumBefore(end: number): number {
    let sum = 0;
    for (let k = end; k > 0; k -= k & -k) sum += this.tree[k]!;
    return sum;
  }
}

/**
 * Prompt tokens each request would prefill again with `cacheTokens` of prefix cache where the sample
 * was served with `servedCacheTokens`: those of a reused context whose stack distance fits the cache
 * it had but not this one. Zero everywhere at or above the cache it had (what was measured stands),
 * and never less on a smaller cache (monotone).
 */
export function recomputedTokens(
  reuse: PrefixReuse,
  servedCacheTokens: number,
  cacheTokens: number,
): Float64Array {
  const out = new Float64Array(reuse.reused.length);
  if (cacheTokens >= servedCacheTokens) return out;
  for (let i = 0; i < out.length; i++) {
    const d = reuse.distance[i]!;
    if (reuse.reused[i]! > 0 && d <= servedCacheTokens && d > cacheTokens) out[i] = reuse.reused[i]!;
  }
  return out;
}
