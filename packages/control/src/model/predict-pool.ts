import type { RequestArrival } from '@governor/signals';
import { type ReplicaStep, replayPrefillWaits } from '../detectors/replay-prefill-queue.ts';
import { estimateKvCapacity, estimateHeldKvTokens, replayKvWaits } from './replay-kv-admission.ts';
import { estimateCachedTokens, measurePrefixReuse, recomputedTokens } from './prefix-reuse.ts';
import { quantileCont } from '@governor/conventions';

export { quantileCont };

// What a pool would do on a number of replicas under a share of today's load. The model is the
// pool's own recent requests (arrival times, uncached prompt tokens, the TTFT and end-to-end latency
// each really had) replayed on each replica count as first-come-first-served prefill servers at the
// pool's uncontended prefill speed (replay-prefill-queue.ts), each request also waiting for room in
// the replicas' KV caches (replay-kv-admission.ts: their size read off the KV usage the pool reports
// and the tokens its requests held). The replay is anchored at the operating
// point: a request's TTFT on n replicas is the TTFT it had, less the wait the replay gives it on the
// replicas it had, plus the wait the replay gives it on n; its e2e moves by the same wait. So at
// today's replica count and load the model returns exactly what was measured, and only the queueing
// it explains changes with n or the load; what it leaves out (routing, decode interference, the
// network, the decode time itself) stays as measured. A request is within the SLO when its TTFT and
// its e2e each meet their objective, where one is configured. It finishes when its e2e (its TTFT
// where no e2e is measured) is within the deadline its client gave it (RequestArrival.deadlineMs):
// past that the client gives up and the request, with its task, fails. On fewer replicas than served
// it, a request whose task's context the smaller prefix cache no longer holds prefills it again
// (prefix-reuse.ts): where its spans say what it found cached, else as the pool's prefix cache hit
// rate apportions its hits (estimateCachedTokens).
//
// Load is scaled in time: a load factor f puts the same requests f times closer together, keeping
// the prompt mix. Waits grow with f and shrink with n, so everything derived here is monotone in
// both (tested), which the sizing's bisection relies on.

export interface PoolObservation {
  /** The pool's recent requests in arrival order. */
  arrivals: readonly RequestArrival[];
  /** Replicas that serve the pool now. */
  replicas: number;
  /**
   * The counts that served the sample, when a scale action fell within it (in time order, on the
   * arrivals' axis; the last is `replicas`). Without it the sample is taken as served on `replicas`
   * throughout. The anchor replays the counts that really served: requests served on more replicas
   * than now did not wait as they would now, and taken for this count's they would make it look faster.
   */
  servedOn?: readonly ReplicaStep[];
  /**
   * Requests the pool received per request in `arrivals` (1 ÷ the sampling ratio for head-sampled
   * traces; default 1). The replay packs the sample's arrivals this much closer, so the queue it
   * replays is the pool's, not the sample's; prediction load factors are relative to the real load.
   */
  sampleScale?: number;
  /** Requests/s the pool receives (sampling weights applied), of which `arrivals` is a sample. */
  ratePerS: number;
  /**
   * Prefill ms per uncached prompt token on an uncontended replica (per prompt token, where no
   * request's spans say what it found cached: see `prefixHitRate`).
   */
  msPerToken: number;
  /**
   * Share of the prompt tokens the pool's replicas looked up in their prefix caches that they found
   * there (runtime counters, over the sample's window); null or absent when not reported. Used where
   * no request's spans say what it found cached (estimateCachedTokens): the prefill work `msPerToken`
   * measured over whole prompts is then spread over the tokens left uncached.
   */
  prefixHitRate?: number | null;
  /** TTFT objective (ms); null when only the e2e one is configured. */
  sloMs: number | null;
  /**
   * End-to-end objective (ms); null or absent when not configured. A request without a measured e2e
   * (`RequestArrival.e2eMs` absent) is judged on its TTFT alone.
   */
  e2eSloMs?: number | null;
  /** Share of requests that did not fail for reasons other than latency (errors load does not explain). */
  successShare: number;
  /**
   * Mean share of its replicas' KV caches in use over the sample's window (vllm:kv_cache_usage_perc,
   * 0–1); null or absent when not reported (then no KV admission is replayed).
   */
  kvUsage?: number | null;
  /** What one replica costs per hour (its GPUs × their price); null when not priced. */
  usdPerReplicaHour: number | null;
}

export interface PoolPrediction {
  replicas: number;
  loadFactor: number;
  /** quantile_cont(0.95) of the predicted TTFTs. */
  ttftP95Ms: number;
  /** quantile_cont(0.95) of the predicted e2e latencies; null when no request carries one. */
  e2eP95Ms: number | null;
  /** Share of requests whose predicted TTFT and e2e are each within their SLO. */
  withinSloShare: number;
  /**
   * Share of the sample's tasks (RequestArrival.task; a request without one is its own task) whose
   * every request is predicted within the SLO: a session of many requests is good only when all are.
   */
  taskWithinSloShare: number;
  /** One standard error of `taskWithinSloShare`, as `uncertainty` is of the requests' share. */
  taskUncertainty: number;
  /**
   * Share of the sample's tasks none of whose requests is predicted past its client's deadline (1
   * when no request carries one): the tasks that succeed, within the SLO or not.
   */
  taskFinishShare: number;
  /** Tasks/s that succeed within the SLO. */
  goodTasksPerS: number;
  usdPerHour: number | null;
  /**
   * One standard error of `withinSloShare` from the sample's size (binomial, with one request's
   * worth added so a perfect small sample is not certain): the band inside which two predictions
   * cannot be told apart.
   */
  uncertainty: number;
}

/** Reusable per observation: the anchor waits are computed once for every replica count asked. */
export interface PoolModel {
  observation: PoolObservation;
  predict(replicas: number, loadFactor?: number): PoolPrediction;
  /** Share within the SLO with no queueing at all: what no replica count can improve on. */
  attainableShare: number;
  /**
   * Share of the sample's tasks whose every request is within the SLO with no queueing at all: a
   * task with one request whose prompt or output misses the SLO on an idle replica is lost whatever
   * the replica count.
   */
  attainableTaskShare: number;
  /** Share of the sample's tasks that finish within their clients' deadlines with no queueing at all. */
  attainableTaskFinishShare: number;
  /**
   * Mean measured queue wait per request (`RequestArrival.queueMs`) beyond the replay's on today's
   * replicas: queueing the replay (prefill, KV admission) does not explain (0 without measured queues).
   */
  unexplainedQueueMs: number;
  /**
   * KV tokens one replica holds (estimateKvCapacity); null where the pool reports no KV usage or its
   * requests do not say what KV they held (then only prefill is replayed).
   */
  kvTokensPerReplica: number | null;
}

export function createPoolModel(observation: PoolObservation): PoolModel | null {
  const limits = sloLimits(observation);
  if (
    observation.arrivals.length === 0 ||
    !(observation.replicas >= 1) ||
    !(observation.msPerToken >= 0) ||
    limits === null
  )
    return null;
  const scale =
    observation.sampleScale !== undefined && observation.sampleScale > 0 ? observation.sampleScale : 1;
  const arrivals = estimateCachedTokens(observation.arrivals, observation.prefixHitRate, scale);
  // The speed was measured over whole prompts where spans do not say what was cached: the same
  // prefill work, spread over the tokens the estimate leaves uncached.
  const msPerToken =
    arrivals === observation.arrivals
      ? observation.msPerToken
      : (observation.msPerToken * sumOf(observation.arrivals, (a) => a.uncachedTokens)) /
        sumOf(arrivals, (a) => a.uncachedTokens);
  const service = Float64Array.from(arrivals, (a) => Math.max(0, a.uncachedTokens) * msPerToken);
  const packed = (f: number) => (f === 1 ? arrivals : arrivals.map((a) => ({ arriveMs: a.arriveMs / f })));
  const servedOn = observation.servedOn?.map((s) => ({ fromMs: s.fromMs / scale, replicas: s.replicas }));
  const anchorPrefill = replayPrefillWaits(packed(scale), service, servedOn ?? observation.replicas);
  const kvPerReplica = estimateKvCapacity(
    arrivals,
    observation.ratePerS,
    observation.replicas,
    observation.kvUsage,
  );
  const kvTokens = Float64Array.from(arrivals, (a) => a.kvTokens ?? 0);
  const holdMs = Float64Array.from(arrivals, (a) => a.holdMs ?? 0);
  // A request starts when a prefill server is free and the cache has room for it.
  const waitsOn = (
    pk: readonly Pick<RequestArrival, 'arriveMs'>[],
    prefill: Float64Array,
    servers: number | readonly ReplicaStep[],
  ): Float64Array => {
    if (kvPerReplica === null) return prefill;
    const kv = replayKvWaits(pk, kvTokens, holdMs, kvPerReplica, servers);
    return prefill.map((w, i) => Math.max(w, kv[i]!));
  };
  const anchorWaits = waitsOn(packed(scale), anchorPrefill, servedOn ?? observation.replicas);
  // The queue the requests measured that the replay does not produce on today's replicas: what
  // holds replicas besides prefill and the KV it replays (full decode batches, steps of other
  // requests' long prompts) and the model cannot size for.
  let unexplainedMs = 0;
  let measured = 0;
  arrivals.forEach((a, i) => {
    if (a.queueMs === undefined || !Number.isFinite(a.queueMs)) return;
    unexplainedMs += Math.max(0, a.queueMs - anchorWaits[i]!);
    measured += 1;
  });
  // The part of each TTFT and e2e the replay's queue does not explain (an e2e never below its TTFT).
  const base = Float64Array.from(arrivals, (a, i) => Math.max(0, a.ttftMs - anchorWaits[i]!));
  const hasE2e = arrivals.some((a) => isMeasured(a.e2eMs));
  const baseE2e = hasE2e
    ? Float64Array.from(arrivals, (a, i) =>
        isMeasured(a.e2eMs) ? Math.max(base[i]!, a.e2eMs - anchorWaits[i]!) : Number.NaN,
      )
    : null;
  const tasks = groupTasks(arrivals);
  const unqueued = withinFlags(limits, base, baseE2e);
  // Fewer replicas hold fewer of the contexts its tasks come back to (prefix-reuse.ts): the prefix
  // cache is what their KV does not hold for requests in flight, which more load holds more of.
  const reuse = kvPerReplica === null ? null : measurePrefixReuse(arrivals, scale);
  const heldKv = reuse === null ? 0 : estimateHeldKvTokens(arrivals, observation.ratePerS);
  const prefixCache = (n: number, f: number) => n * kvPerReplica! - f * heldKv;
  const cache = new Map<string, PoolPrediction>();
  const predict = (replicas: number, loadFactor = 1): PoolPrediction => {
    const n = Math.max(1, Math.floor(replicas));
    const f = loadFactor > 0 ? loadFactor : 1;
    const key = `${n}:${f}`;
    const hit = cache.get(key);
    if (hit) return hit;
    const pk = packed(f * scale);
    // Each request's own prefill of a context it no longer finds cached delays it and those behind it.
    const again = reuse && recomputedTokens(reuse, prefixCache(observation.replicas, 1), prefixCache(n, f));
    const own = again ? again.map((t) => t * msPerToken) : null;
    const prefill = own ? service.map((s, i) => s + own[i]!) : service;
    const waits = waitsOn(pk, replayPrefillWaits(pk, prefill, n), n);
    const delay = own ? waits.map((w, i) => w + own[i]!) : waits;
    const ttft = Float64Array.from(base, (b, i) => b + delay[i]!);
    const e2e = baseE2e && Float64Array.from(baseE2e, (b, i) => b + delay[i]!);
    const prediction = summarize(observation, limits, tasks, n, f, ttft, e2e);
    cache.set(key, prediction);
    return prediction;
  };
  return {
    observation,
    predict,
    attainableShare: countOf(unqueued) / base.length,
    attainableTaskShare: countGoodTasks(tasks, unqueued) / tasks.count,
    attainableTaskFinishShare: countGoodTasks(tasks, finishFlags(arrivals, base, baseE2e)) / tasks.count,
    unexplainedQueueMs: measured > 0 ? unexplainedMs / measured : 0,
    kvTokensPerReplica: kvPerReplica,
  };
}

interface SloLimits {
  ttftMs: number;
  e2eMs: number;
}

/** The objectives a request must meet (an unconfigured one is no limit); null when neither is. */
function sloLimits(o: PoolObservation): SloLimits | null {
  const ttftMs = o.sloMs !== null && o.sloMs > 0 ? o.sloMs : Number.POSITIVE_INFINITY;
  const e2eMs =
    o.e2eSloMs !== undefined && o.e2eSloMs !== null && o.e2eSloMs > 0 ? o.e2eSloMs : Number.POSITIVE_INFINITY;
  return Number.isFinite(ttftMs) || Number.isFinite(e2eMs) ? { ttftMs, e2eMs } : null;
}

function isMeasured(ms: number | undefined): ms is number {
  return ms !== undefined && Number.isFinite(ms);
}

/** Whether each request's TTFT and e2e (NaN: not measured, not judged) are each within their limit. */
function withinFlags(limits: SloLimits, ttft: Float64Array, e2e: Float64Array | null): Uint8Array {
  const flags = new Uint8Array(ttft.length);
  for (let i = 0; i < ttft.length; i++) {
    const e = e2e?.[i] ?? Number.NaN;
    flags[i] = ttft[i]! <= limits.ttftMs && !(e > limits.e2eMs) ? 1 : 0;
  }
  return flags;
}

/** Whether each request ends (its e2e, its TTFT where none is measured) within its client's deadline. */
function finishFlags(
  arrivals: readonly RequestArrival[],
  ttft: Float64Array,
  e2e: Float64Array | null,
): Uint8Array {
  const flags = new Uint8Array(ttft.length);
  for (let i = 0; i < ttft.length; i++) {
    const deadline = arrivals[i]!.deadlineMs;
    const e = e2e?.[i] ?? Number.NaN;
    flags[i] = deadline === undefined || (Number.isNaN(e) ? ttft[i]! : e) <= deadline ? 1 : 0;
  }
  return flags;
}

function sumOf(arrivals: readonly RequestArrival[], value: (a: RequestArrival) => number): number {
  let sum = 0;
  for (const a of arrivals) sum += Math.max(0, value(a));
  return sum;
}

function countOf(flags: Uint8Array): number {
  let n = 0;
  for (const f of flags) n += f;
  return n;
}

/** Tasks of the sample: each request's task index (its own index without one) and how many there are. */
interface TaskGroups {
  of: Int32Array;
  count: number;
}

function groupTasks(arrivals: readonly RequestArrival[]): TaskGroups {
  const of = Int32Array.from(arrivals, (a, i) =>
    a.task !== undefined && a.task >= 0 && a.task < arrivals.length ? a.task : i,
  );
  const seen = new Uint8Array(arrivals.length);
  let count = 0;
  for (const t of of) {
    if (!seen[t]) count += 1;
    seen[t] = 1;
  }
  return { of, count };
}

/** Tasks whose every request in the sample is within the SLO. */
function countGoodTasks(tasks: TaskGroups, flags: Uint8Array): number {
  const missed = new Uint8Array(flags.length);
  for (let i = 0; i < flags.length; i++) if (!flags[i]) missed[tasks.of[i]!] = 1;
  const seen = new Uint8Array(flags.length);
  let good = 0;
  for (const t of tasks.of) {
    if (seen[t]) continue;
    seen[t] = 1;
    if (!missed[t]) good += 1;
  }
  return good;
}

function summarize(
  o: PoolObservation,
  limits: SloLimits,
  tasks: TaskGroups,
  replicas: number,
  loadFactor: number,
  ttft: Float64Array,
  e2e: Float64Array | null,
): PoolPrediction {
  const n = ttft.length;
  const flags = withinFlags(limits, ttft, e2e);
  const share = countOf(flags) / n;
  const goodTasks = countGoodTasks(tasks, flags);
  const taskShare = goodTasks / tasks.count;
  const finishShare = countGoodTasks(tasks, finishFlags(o.arrivals, ttft, e2e)) / tasks.count;
  const measuredE2e = e2e?.filter((v) => !Number.isNaN(v));
  return {
    replicas,
    loadFactor,
    ttftP95Ms: quantileCont(ttft, 0.95),
    e2eP95Ms: measuredE2e && measuredE2e.length > 0 ? quantileCont(measuredE2e, 0.95) : null,
    withinSloShare: share,
    taskWithinSloShare: taskShare,
    // Tasks arrive at the requests' rate over the requests per task; each task's requests must all
    // succeed.
    goodTasksPerS: ((o.ratePerS * loadFactor * goodTasks) / n) * o.successShare ** (n / tasks.count),
    usdPerHour: o.usdPerReplicaHour === null ? null : replicas * o.usdPerReplicaHour,
    uncertainty: standardError(share, n),
    taskUncertainty: standardError(taskShare, tasks.count),
    taskFinishShare: finishShare,
  };
}

/** Binomial standard error of a share over n, with one observation's worth added (see `uncertainty`). */
function standardError(share: number, n: number): number {
  return Math.sqrt((share * (1 - share) + 1 / n) / n);
}
