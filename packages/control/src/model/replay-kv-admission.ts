import type { RequestArrival } from '@governor/signals';
import type { ReplicaStep } from '../detectors/replay-prefill-queue.ts';

// Would n replicas hold the pool's requests in their KV cache? A vLLM replica admits a waiting
// request only when its KV cache has blocks for it, first come first served, and keeps them until the
// request ends (vllm-project/vllm, vllm/v1/core/sched/scheduler.py at 00024d31, Scheduler.schedule:
// running requests are given their blocks first, preempting the newest when allocate_slots fails;
// then the waiting queue is admitted in order until allocate_slots fails or max_num_seqs run). Long prompts and long outputs fill the cache long before the prefill servers of
// replay-prefill-queue.ts are busy: that queueing is replayed here. Each request holds its prompt and
// output tokens (`RequestArrival.kvTokens`) from its admission for as long as it really did
// (`holdMs`); the replicas' caches are taken together (the router balances KV usage: llm-d's
// kv-cache-utilization scorer), each request no larger than one replica's.
//
// How many tokens a replica holds is read off what the pool reports: vLLM's vllm:kv_cache_usage_perc
// (the share of its KV blocks in use) against the tokens its requests held on average (Little's law:
// their rate × the mean of tokens × time held). A pool at 30 % usage on three replicas would sit at
// 90 % on one: the replay admits requests late only where the fewer caches fill. Admission times
// only move earlier with more capacity (each request admitted no later: the requests it waits behind
// were admitted no later and release no later), so the replay is monotone in replicas.

/** The requests of a sample the KV replay can use: each says what KV it held and for how long. */
export function holdsKv(arrivals: readonly RequestArrival[]): boolean {
  return arrivals.length > 0 && arrivals.every((a) => isPositive(a.kvTokens) && isFiniteHold(a.holdMs));
}

/**
 * Waits (ms) before each request (sorted by arrival) is admitted when replicas of `tokensPerReplica`
 * KV tokens each serve the arrivals first come, first served: `servers` is a count, or the counts in
 * time order (ReplicaStep, as the prefill replay takes them).
 */
export function replayKvWaits(
  arrivals: readonly Pick<RequestArrival, 'arriveMs'>[],
  kvTokens: ArrayLike<number>,
  holdMs: ArrayLike<number>,
  tokensPerReplica: number,
  servers: number | readonly ReplicaStep[],
): Float64Array {
  const steps =
    typeof servers === 'number' ? [{ fromMs: Number.NEGATIVE_INFINITY, replicas: servers }] : servers;
  const capacityAt = (t: number): number => {
    let replicas = Math.max(1, Math.floor(steps[0]?.replicas ?? 1));
    for (const s of steps) if (s.fromMs <= t) replicas = Math.max(1, Math.floor(s.replicas));
    return replicas * tokensPerReplica;
  };
  const releases = new ReleaseHeap();
  const waits = new Float64Array(arrivals.length);
  let used = 0;
  let last = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < arrivals.length; i++) {
    const arrive = arrivals[i]!.arriveMs;
    const need = Math.min(Math.max(0, kvTokens[i]!), tokensPerReplica);
    let t = Math.max(arrive, last);
    used -= releases.popUntil(t);
    while (used + need > capacityAt(t)) {
      const next = releases.peekTime();
      const grows = nextGrowth(steps, t);
      if (next === null && grows === null) break;
      t = next === null ? grows! : grows === null ? next : Math.min(next, grows);
      used -= releases.popUntil(t);
    }
    waits[i] = t - arrive;
    last = t;
    used += need;
    releases.push(t + Math.max(0, holdMs[i]!), need);
  }
  return waits;
}

/** When the replica count next rises after `t`; null if it does not. */
function nextGrowth(steps: readonly ReplicaStep[], t: number): number | null {
  let replicas = steps[0]?.replicas ?? 1;
  for (const s of steps) {
    if (s.fromMs > t && s.replicas > replicas) return s.fromMs;
    if (s.fromMs <= t) replicas = s.replicas;
  }
  return null;
}

/**
 * KV tokens one replica holds: the tokens the pool's requests held on average (`ratePerS` × the mean
 * of each request's KV tokens × its hold) over the share of its replicas' caches in use (`kvUsage`,
 * 0–1) on `replicas`; never less than the largest request (it was served). Null without a usage
 * reading or requests that say what KV they held.
 */
export function estimateKvCapacity(
  arrivals: readonly RequestArrival[],
  ratePerS: number,
  replicas: number,
  kvUsage: number | null | undefined,
): number | null {
  if (!holdsKv(arrivals) || kvUsage == null || !(kvUsage > 0) || !(replicas >= 1) || !(ratePerS > 0))
    return null;
  let largest = 0;
  for (const a of arrivals) largest = Math.max(largest, a.kvTokens!);
  return Math.max(largest, estimateHeldKvTokens(arrivals, ratePerS) / (replicas * Math.min(1, kvUsage)));
}

/**
 * KV tokens the pool's requests hold on average across its replicas (Little's law: `ratePerS` × the
 * mean of each request's KV tokens × its hold); 0 where its requests do not say what they held.
 */
export function estimateHeldKvTokens(arrivals: readonly RequestArrival[], ratePerS: number): number {
  if (!holdsKv(arrivals) || !(ratePerS > 0)) return 0;
  let tokenMs = 0;
  for (const a of arrivals) tokenMs += a.kvTokens! * a.holdMs!;
  return (ratePerS / 1000) * (tokenMs / arrivals.length);
}

function isPositive(v: number | undefined): v is number {
  return v !== undefined && Number.isFinite(v) && v > 0;
}

function isFiniteHold(v: number | undefined): v is number {
  return v !== undefined && Number.isFinite(v) && v >= 0;
}

/** A min-heap of (release time, tokens). */
class ReleaseHeap {
  private times: number[] = [];
  private tokens: number[] = [];

  push(time: number, tokens: number): void {
    const t = this.times;
    const k = this.tokens;
    let i = t.length;
    t.push(time);
    k.push(tokens);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (t[parent]! <= time) break;
      t[i] = t[parent]!;
      k[i] = k[parent]!;
      i = parent;
    }
    t[i] = time;
    k[i] = tokens;
  }

  peekTime(): number | null {
    return this.times.length > 0 ? this.times[0]! : null;
  }

  /** Removes every release at or before `time`; returns the tokens they free. */
  popUntil(time: number): number {
    let freed = 0;
    while (this.times.length > 0 && this.times[0]! <= time) freed += this.pop();
    return freed;
  }

  private pop(): number {
    const t = this.times;
    const k = this.tokens;
    const freed = k[0]!;
    const lastT = t.pop()!;
    const lastK = k.pop()!;
    if (t.length === 0) return freed;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= t.length) break;
      const right = left + 1;
      const child = right < t.length && t[right]! < t[left]! ? right : left;
      if (t[child]! >= lastT) break;
      t[i] = t[child]!;
      k[i] = k[child]!;
      i = child;
    }
    t[i] = lastT;
    k[i] = lastK;
    return freed;
  }
}
