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
  const last = new Map<number, number>();
  let any = false;
  for (let i = 0; i < n; i++) {
    const a = arrivals[i]!;
    const task = a.task ?? -1 - i;
    const prev = last.get(task);
    last.set(task, i);
    if (prev === undefined || !(a.cachedTokens! > 0)) continue;
    const held = arrivals[prev]!.kvTokens ?? 0;
    reused[i] = Math.min(a.cachedTokens!, held);
    if (reused[i]! <= 0) continue;
    any = true;
    // Its own context must fit too.
    distance[i] = held + sampleScale * distinctContextTokens(arrivals, prev, i, task);
  }
  return any ? { reused, distance } : null;
}

/** The latest context (KV tokens) of each task other than `task` with a request in (from, to). */
function distinctContextTokens(arrivals: readonly RequestArrival[], from: number, to: number, task: number) {
  const seen = new Set<number>();
  let tokens = 0;
  // Newest first: a task's latest request in the interval holds its context as of `to`.
  for (let j = to - 1; j > from; j--) {
    const a = arrivals[j]!;
    const t = a.task ?? -1 - j;
    if (t === task || seen.has(t)) continue;
    seen.add(t);
    tokens += a.kvTokens ?? 0;
  }
  return tokens;
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
