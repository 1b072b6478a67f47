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
  const { held, distance } = stackDistances(arrivals, sampleScale);
  const reused = new Float64Array(arrivals.length);
  let any = false;
  arrivals.forEach((a, i) => {
    if (held[i]! > 0 && a.cachedTokens! > 0) reused[i] = Math.min(a.cachedTokens!, held[i]!);
    if (reused[i]! > 0) any = true;
    else distance[i] = 0;
  });
  return any ? { reused, distance } : null;
}

/**
 * Per request whose task has an earlier request in the sample: the KV tokens that request held (its
 * task's context, `held`; 0 for a task's first request) and the request's LRU stack distance — that
 * context and, `sampleScale` times over, the latest contexts of the other tasks touched since.
 */
function stackDistances(
  arrivals: readonly RequestArrival[],
  sampleScale: number,
): { held: Float64Array; distance: Float64Array } {
  const n = arrivals.length;
  const held = new Float64Array(n);
  const distance = new Float64Array(n);
  // Each task's latest request so far holds its context; a Fenwick tree over the sample's positions
  // holds that context's KV tokens at its latest position only, so the sum over the positions between
  // a task's two requests counts each other task touched in between once, at its latest context — the
  // stack distance in O(log n) a request instead of a scan back over the sample.
  const latest = new Fenwick(n);
  const last = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const a = arrivals[i]!;
    const task = a.task ?? -1 - i;
    const prev = last.get(task);
    last.set(task, i);
    if (prev !== undefined) {
      held[i] = arrivals[prev]!.kvTokens ?? 0;
      // Its own context must fit too.
      distance[i] = held[i]! + sampleScale * (latest.sumBefore(i) - latest.sumBefore(prev + 1));
      latest.add(prev, -held[i]!);
    }
    latest.add(i, a.kvTokens ?? 0);
  }
  return { held, distance };
}

/**
 * The sample with what each request found cached, where no request's spans say (vLLM's
 * `llm_request` span carries no cached-token count) but the pool's runtime counts its prefix cache's
 * lookups (`hitRate`: tokens found over tokens looked up, vllm:prefix_cache_hits_total over
 * vllm:prefix_cache_queries_total). The sample's prompts found that share of their tokens cached;
 * an LRU cache gives them to the requests that came back soonest: its tasks' own contexts in order of
 * stack distance, each whole (at most its prompt but one token, as vLLM always computes the last),
 * until the hits run out. Hits beyond every task's own context are prefixes many tasks share (a
 * system prompt): they are spread over every request's remaining prompt alike. Unchanged where a
 * request says what it found cached, or the hit rate is not known.
 */
export function estimateCachedTokens(
  arrivals: readonly RequestArrival[],
  hitRate: number | null | undefined,
  sampleScale = 1,
): readonly RequestArrival[] {
  if (hitRate === null || hitRate === undefined || !(hitRate > 0)) return arrivals;
  if (arrivals.some((a) => a.cachedTokens !== undefined)) return arrivals;
  const n = arrivals.length;
  const prompt = Float64Array.from(arrivals, (a) => Math.max(0, a.uncachedTokens));
  let hits = Math.min(1, hitRate) * prompt.reduce((sum, t) => sum + t, 0);
  const { held, distance } = stackDistances(arrivals, sampleScale);
  const cached = new Float64Array(n);
  const returning = [...arrivals.keys()].filter((i) => held[i]! > 0);
  // Nearest first; a tie in arrival order, so the estimate is a function of the sample alone.
  returning.sort((a, b) => distance[a]! - distance[b]! || a - b);
  for (const i of returning) {
    if (hits <= 0) break;
    cached[i] = Math.min(hits, held[i]!, Math.max(0, prompt[i]! - 1));
    hits -= cached[i]!;
  }
  let rest = 0;
  for (let i = 0; i < n; i++) rest += Math.max(0, prompt[i]! - 1 - cached[i]!);
  const shared = rest > 0 ? Math.min(1, hits / rest) : 0;
  return arrivals.map((a, i) => {
    const c = cached[i]! + shared * Math.max(0, prompt[i]! - 1 - cached[i]!);
    return { ...a, cachedTokens: c, uncachedTokens: Math.max(1, prompt[i]! - c) };
  });
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
