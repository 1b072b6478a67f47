// One vLLM-style replica: continuous batching with chunked prefill, a KV cache of fixed capacity in
// tokens, FCFS admission that waits when the KV cache is full, and recompute preemption of the newest
// sequence under memory pressure. Pure decode stretches are advanced in one event ("segment") up to
// the next completion or KV limit, so a run costs events per batch change, not per token.

import { createDeque } from '../engine/deque.ts';
import type { Deque } from '../engine/deque.ts';
import { PREFIX_BLOCK_TOKENS } from '../workload/workload-types.ts';
import type { PrefixBlocks } from '../workload/workload-types.ts';
import type { PoolSpec } from './fleet-spec.ts';
import { createPrefixCache } from './prefix-cache.ts';
import type { PrefixCache } from './prefix-cache.ts';
import { computeStepMs } from './step-time-model.ts';

export type SeqPhase = 'new' | 'waiting' | 'prefill' | 'decode' | 'done';

/** What a replica tracks about one request it serves. */
export interface RuntimeSeq {
  promptTokens: number;
  outputTokens: number;
  prefix: PrefixBlocks | undefined;
  phase: SeqPhase;
  arriveMs: number;
  /** First admission into the running batch; -1 until then. */
  admitMs: number;
  firstTokenMs: number;
  lastTokenMs: number;
  generated: number;
  prefillRemaining: number;
  chunk: number;
  cachedTokens: number;
  kvTokens: number;
  /** -1: no injected failure; 0: fail when prefill ends; n: fail once n tokens were streamed. */
  failAtToken: number;
  failErrorType: string;
  preemptions: number;
  queueDepthAtArrival: number;
  kvUsageAtAdmission: number;
  batchSizeAtAdmission: number;
  aborted: boolean;
}

export type ReplicaStatus = 'starting' | 'running' | 'draining';

/** Upper bounds of vLLM's iteration-tokens histogram buckets (tokens an engine step processed). */
export const ITERATION_TOKEN_BOUNDS = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384];
/** vLLM V1 `vllm:time_to_first_token_seconds` bucket bounds (vllm/v1/metrics/loggers.py). */
export const TTFT_BOUNDS_S = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0,
  80.0, 160.0, 640.0, 2560.0,
];
/** vLLM V1 `request_latency_buckets` (e2e, queue, prefill, decode and inference time histograms). */
export const REQUEST_LATENCY_BOUNDS_S = [
  0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0,
  960.0, 1920.0, 7680.0,
];
/** vLLM V1 FinishReason values, as `vllm:request_success_total{finished_reason}` labels them. */
export const FINISH_REASONS = ['stop', 'length', 'abort', 'error'] as const;
export type FinishReason = (typeof FINISH_REASONS)[number];

/** A cumulative histogram: counts per bucket of `bounds`, the last one above the largest bound. */
export interface HistogramCounts {
  bounds: readonly number[];
  counts: number[];
  sum: number;
  count: number;
}

export function createHistogramCounts(bounds: readonly number[]): HistogramCounts {
  return { bounds, counts: new Array<number>(bounds.length + 1).fill(0), sum: 0, count: 0 };
}

/** Prometheus `le` semantics: a value lands in the first bucket whose upper bound is ≥ it. */
export function observeHistogram(h: HistogramCounts, value: number): void {
  let bucket = h.bounds.findIndex((bound) => value <= bound);
  if (bucket < 0) bucket = h.bounds.length;
  h.counts[bucket]! += 1;
  h.sum += value;
  h.count += 1;
}

/** Per-request figures vLLM exports as counters and histograms, counted from the process start. */
export interface RequestCounters {
  /** Prompt tokens looked up in the prefix cache at each scheduling (vllm:prefix_cache_queries). */
  prefixQueries: number;
  /** Of those, tokens found cached (vllm:prefix_cache_hits). */
  prefixHits: number;
  preemptions: number;
  finished: Record<FinishReason, number>;
  ttftS: HistogramCounts;
  e2eS: HistogramCounts;
  queueS: HistogramCounts;
}

/**
 * The runtime's cumulative counters, as vLLM exports them: prompt tokens prefilled, tokens generated,
 * and engine steps by the tokens each processed (vllm:iteration_tokens_total). They start at zero
 * with the replica.
 */
export interface EngineCounters {
  promptTokens: number;
  generationTokens: number;
  iterations: number;
  iterationTokens: number;
  /** Steps per bucket of ITERATION_TOKEN_BOUNDS, the last one for steps above the largest bound. */
  iterationBuckets: number[];
  requests: RequestCounters;
}

/** A deep copy (a scrape's snapshot must not change as the replica runs on). */
export function copyEngineCounters(c: EngineCounters): EngineCounters {
  const copyHistogram = (h: HistogramCounts): HistogramCounts => ({ ...h, counts: [...h.counts] });
  const r = c.requests;
  return {
    ...c,
    iterationBuckets: [...c.iterationBuckets],
    requests: {
      ...r,
      finished: { ...r.finished },
      ttftS: copyHistogram(r.ttftS),
      e2eS: copyHistogram(r.e2eS),
      queueS: copyHistogram(r.queueS),
    },
  };
}

export interface Replica {
  id: string;
  poolName: string;
  spec: PoolSpec;
  status: ReplicaStatus;
  /** The GPU node the replica runs on (set by the simulation's placement); -1 before. */
  nodeIndex: number;
  createdMs: number;
  readyMs: number;
  waiting: Deque<RuntimeSeq>;
  /** Waiting sequences not aborted (aborted ones are dropped lazily at admission). */
  waitingCount: number;
  running: RuntimeSeq[];
  kvUsed: number;
  mode: 'idle' | 'mixed' | 'decode';
  version: number;
  stepStartMs: number;
  stepMs: number;
  /**
   * Prompt tokens and decoding sequences of the current mixed step as planned: counted when it ends,
   * even for a sequence aborted meanwhile (vLLM handles aborts between steps; the GPU did the work).
   */
  stepPrefillTokens: number;
  stepDecodeSeqs: number;
  segSteps: number;
  segDone: number;
  stepEndMs: number;
  busyMs: number;
  busySinceMs: number;
  cache: PrefixCache;
  /** Step-time multiplier until this time (cold-pool warm-up). */
  warmUntilMs: number;
  warmSlowdown: number;
  counters: EngineCounters;
}

/** Callbacks into the simulation that owns the replica. */
export interface ReplicaHost {
  scheduleStep(replica: Replica, atMs: number): void;
  getSlowdown(replica: Replica, atMs: number): number;
  /** First admission: the host may inject a failure (sets failAtToken / failErrorType). */
  onAdmit(replica: Replica, seq: RuntimeSeq, atMs: number): void;
  onFinished(replica: Replica, seq: RuntimeSeq, atMs: number, errorType: string | null): void;
  onIdle(replica: Replica, atMs: number): void;
}

export function createReplica(
  id: string,
  poolName: string,
  spec: PoolSpec,
  status: ReplicaStatus,
  nowMs: number,
): Replica {
  return {
    id,
    poolName,
    spec,
    status,
    nodeIndex: -1,
    createdMs: nowMs,
    readyMs: status === 'running' ? nowMs : -1,
    waiting: createDeque<RuntimeSeq>(),
    waitingCount: 0,
    running: [],
    kvUsed: 0,
    mode: 'idle',
    version: 0,
    stepStartMs: 0,
    stepMs: 0,
    stepPrefillTokens: 0,
    stepDecodeSeqs: 0,
    segSteps: 0,
    segDone: 0,
    stepEndMs: 0,
    busyMs: 0,
    busySinceMs: -1,
    cache: createPrefixCache(Math.floor(spec.kvCapacityTokens / PREFIX_BLOCK_TOKENS)),
    warmUntilMs: -1,
    warmSlowdown: 1,
    counters: {
      promptTokens: 0,
      generationTokens: 0,
      iterations: 0,
      iterationTokens: 0,
      iterationBuckets: new Array<number>(ITERATION_TOKEN_BOUNDS.length + 1).fill(0),
      requests: {
        prefixQueries: 0,
        prefixHits: 0,
        preemptions: 0,
        finished: { stop: 0, length: 0, abort: 0, error: 0 },
        ttftS: createHistogramCounts(TTFT_BOUNDS_S),
        e2eS: createHistogramCounts(REQUEST_LATENCY_BOUNDS_S),
        queueS: createHistogramCounts(REQUEST_LATENCY_BOUNDS_S),
      },
    },
  };
}

/**
 * Counts a request the engine finished (completed or failed in the engine), as vLLM V1's stats
 * logger does: e2e from arrival, queue time until first scheduled, and the finish reason.
 */
export function recordFinishedRequest(
  replica: Replica,
  seq: RuntimeSeq,
  atMs: number,
  reason: FinishReason,
): void {
  const r = replica.counters.requests;
  r.finished[reason] += 1;
  observeHistogram(r.e2eS, (atMs - seq.arriveMs) / 1000);
  if (seq.admitMs >= 0) observeHistogram(r.queueS, (seq.admitMs - seq.arriveMs) / 1000);
}

/** Counts `steps` engine steps of `tokens` tokens each. */
function countSteps(replica: Replica, steps: number, tokens: number): void {
  if (steps <= 0) return;
  const c = replica.counters;
  c.iterations += steps;
  c.iterationTokens += steps * tokens;
  let bucket = ITERATION_TOKEN_BOUNDS.findIndex((bound) => tokens <= bound);
  if (bucket < 0) bucket = ITERATION_TOKEN_BOUNDS.length;
  c.iterationBuckets[bucket]! += steps;
}

export function getBusyMs(replica: Replica, nowMs: number): number {
  return replica.busyMs + (replica.busySinceMs >= 0 ? nowMs - replica.busySinceMs : 0);
}

export function getKvUsage(replica: Replica): number {
  return Math.min(1, replica.kvUsed / replica.spec.kvCapacityTokens);
}

function markBusy(replica: Replica, nowMs: number): void {
  if (replica.busySinceMs < 0) replica.busySinceMs = nowMs;
}

function markIdle(replica: Replica, nowMs: number): void {
  if (replica.busySinceMs >= 0) {
    replica.busyMs += nowMs - replica.busySinceMs;
    replica.busySinceMs = -1;
  }
}

function getTargetTokens(seq: RuntimeSeq): number {
  return seq.failAtToken > 0 ? Math.min(seq.outputTokens, seq.failAtToken) : seq.outputTokens;
}

/** Brings a decode segment's token counts up to `nowMs` (idempotent; call before reading state). */
export function syncReplica(replica: Replica, nowMs: number): void {
  if (replica.mode !== 'decode') return;
  const done = Math.min(replica.segSteps, Math.floor((nowMs - replica.stepStartMs) / replica.stepMs + 1e-9));
  const delta = done - replica.segDone;
  if (delta <= 0) return;
  for (const seq of replica.running) {
    seq.generated += delta;
    seq.kvTokens += delta;
  }
  replica.kvUsed += delta * replica.running.length;
  replica.counters.generationTokens += delta * replica.running.length;
  countSteps(replica, delta, replica.running.length);
  replica.segDone = done;
}

/** Ends the current decode segment at the next step boundary so a changed batch takes effect. */
function cutSegment(host: ReplicaHost, replica: Replica, nowMs: number): void {
  syncReplica(replica, nowMs);
  const boundary = replica.segDone + 1;
  if (boundary < replica.segSteps) {
    replica.segSteps = boundary;
    replica.version += 1;
    replica.stepEndMs = replica.stepStartMs + boundary * replica.stepMs;
    host.scheduleStep(replica, replica.stepEndMs);
  }
}

/** Re-plans at the next step boundary (new arrival, abort, or a change of step speed). */
export function wakeReplica(host: ReplicaHost, replica: Replica, nowMs: number): void {
  if (replica.mode === 'idle') planStep(host, replica, nowMs);
  else if (replica.mode === 'decode') cutSegment(host, replica, nowMs);
}

export function enqueueSeq(host: ReplicaHost, replica: Replica, seq: RuntimeSeq, nowMs: number): void {
  seq.phase = 'waiting';
  seq.arriveMs = nowMs;
  seq.queueDepthAtArrival = replica.waitingCount;
  replica.waiting.push(seq);
  replica.waitingCount += 1;
  wakeReplica(host, replica, nowMs);
}

/** Removes a sequence (client gone, request killed); frees its KV blocks. */
export function abortSeq(host: ReplicaHost, replica: Replica, seq: RuntimeSeq, nowMs: number): void {
  if (seq.phase === 'waiting') {
    seq.aborted = true;
    seq.phase = 'done';
    replica.waitingCount -= 1;
    return;
  }
  if (seq.phase !== 'prefill' && seq.phase !== 'decode') return;
  syncReplica(replica, nowMs);
  removeRunning(replica, seq);
  if (replica.mode === 'decode') cutSegment(host, replica, nowMs);
}

function removeRunning(replica: Replica, seq: RuntimeSeq): void {
  const index = replica.running.indexOf(seq);
  if (index >= 0) replica.running.splice(index, 1);
  replica.kvUsed -= seq.kvTokens;
  seq.kvTokens = 0;
  seq.phase = 'done';
}

/** Takes every sequence off the replica (replica killed); returns them for the caller to fail. */
export function evictAll(replica: Replica, nowMs: number): RuntimeSeq[] {
  syncReplica(replica, nowMs);
  const seqs = [...replica.running];
  for (const seq of replica.waiting.toArray()) if (!seq.aborted) seqs.push(seq);
  for (const seq of seqs) {
    seq.phase = 'done';
    seq.kvTokens = 0;
  }
  replica.running = [];
  replica.waiting = createDeque<RuntimeSeq>();
  replica.waitingCount = 0;
  replica.kvUsed = 0;
  replica.mode = 'idle';
  replica.version += 1;
  markIdle(replica, nowMs);
  return seqs;
}

function admit(host: ReplicaHost, replica: Replica, nowMs: number): void {
  const spec = replica.spec;
  while (replica.waiting.length > 0) {
    const seq = replica.waiting.peek()!;
    if (seq.aborted) {
      replica.waiting.shift();
      continue;
    }
    if (replica.running.length >= spec.maxBatchSeqs) break;
    const needTokens = seq.promptTokens + seq.generated;
    if (replica.kvUsed + needTokens > spec.kvCapacityTokens) {
      if (replica.running.length > 0) break;
      replica.waiting.shift();
      replica.waitingCount -= 1;
      seq.phase = 'done';
      host.onFinished(replica, seq, nowMs, 'context_length_exceeded');
      continue;
    }
    replica.waiting.shift();
    replica.waitingCount -= 1;
    const matched = seq.prefix ? replica.cache.matchBlocks(seq.prefix) : 0;
    const cached = Math.min(matched * PREFIX_BLOCK_TOKENS, needTokens - 1);
    replica.counters.requests.prefixQueries += needTokens;
    replica.counters.requests.prefixHits += cached;
    if (seq.admitMs < 0) {
      seq.admitMs = nowMs;
      seq.cachedTokens = cached;
      seq.kvUsageAtAdmission = getKvUsage(replica);
      seq.batchSizeAtAdmission = replica.running.length + 1;
      host.onAdmit(replica, seq, nowMs);
    }
    seq.prefillRemaining = needTokens - cached;
    seq.phase = 'prefill';
    seq.chunk = 0;
    seq.kvTokens = needTokens;
    replica.kvUsed += needTokens;
    replica.running.push(seq);
  }
}

/** vLLM's recompute preemption: the newest running sequence gives its blocks back and waits again. */
function preemptNewest(replica: Replica): void {
  const seq = replica.running.pop();
  if (!seq) return;
  replica.kvUsed -= seq.kvTokens;
  seq.kvTokens = 0;
  seq.phase = 'waiting';
  seq.preemptions += 1;
  replica.counters.requests.preemptions += 1;
  replica.waiting.unshift(seq);
  replica.waitingCount += 1;
}

function planStep(host: ReplicaHost, replica: Replica, nowMs: number): void {
  admit(host, replica, nowMs);
  // Each running sequence may add one token of KV this step; make room by preempting the newest.
  while (
    replica.running.length > 1 &&
    replica.kvUsed + replica.running.length > replica.spec.kvCapacityTokens
  ) {
    preemptNewest(replica);
  }
  if (replica.running.length === 0) {
    replica.mode = 'idle';
    markIdle(replica, nowMs);
    host.onIdle(replica, nowMs);
    return;
  }
  markBusy(replica, nowMs);
  const spec = replica.spec;
  const slowdown = host.getSlowdown(replica, nowMs);
  let decoders = 0;
  let hasPrefill = false;
  for (const seq of replica.running) {
    if (seq.phase === 'decode') decoders += 1;
    else hasPrefill = true;
  }
  replica.version += 1;
  replica.stepStartMs = nowMs;
  if (hasPrefill) {
    let budget = Math.max(spec.maxBatchedTokens - decoders, 256);
    let prefillTokens = 0;
    for (const seq of replica.running) {
      if (seq.phase !== 'prefill') continue;
      seq.chunk = Math.min(seq.prefillRemaining, budget);
      budget -= seq.chunk;
      prefillTokens += seq.chunk;
    }
    replica.stepPrefillTokens = prefillTokens;
    replica.stepDecodeSeqs = decoders;
    replica.mode = 'mixed';
    replica.stepMs = computeStepMs(spec.stepModel, { prefillTokens, decodeSeqs: decoders }, slowdown);
    replica.stepEndMs = nowMs + replica.stepMs;
  } else {
    let steps = Number.POSITIVE_INFINITY;
    for (const seq of replica.running) steps = Math.min(steps, getTargetTokens(seq) - seq.generated);
    const roomSteps = Math.floor((spec.kvCapacityTokens - replica.kvUsed) / replica.running.length);
    steps = Math.max(1, Math.min(steps, roomSteps));
    replica.mode = 'decode';
    replica.stepMs = computeStepMs(
      spec.stepModel,
      { prefillTokens: 0, decodeSeqs: replica.running.length },
      slowdown,
    );
    replica.segSteps = steps;
    replica.segDone = 0;
    replica.stepEndMs = nowMs + steps * replica.stepMs;
  }
  host.scheduleStep(replica, replica.stepEndMs);
}

/** Handles the end of a scheduled step; stale versions (re-planned since) are ignored. */
export function completeStep(host: ReplicaHost, replica: Replica, version: number, nowMs: number): void {
  if (version !== replica.version || replica.mode === 'idle') return;
  const finished: Array<[RuntimeSeq, string | null]> = [];
  if (replica.mode === 'mixed') {
    for (const seq of replica.running) {
      if (seq.phase === 'decode') {
        seq.generated += 1;
        seq.kvTokens += 1;
        replica.kvUsed += 1;
        replica.counters.generationTokens += 1;
      } else if (seq.phase === 'prefill' && seq.chunk > 0) {
        seq.prefillRemaining -= seq.chunk;
        seq.chunk = 0;
        if (seq.prefillRemaining > 0) continue;
        if (seq.prefix) replica.cache.insert(seq.prefix);
        if (seq.failAtToken === 0 && seq.generated === 0) {
          finished.push([seq, seq.failErrorType]);
          continue;
        }
        seq.phase = 'decode';
        if (seq.generated === 0) {
          seq.firstTokenMs = nowMs;
          observeHistogram(replica.counters.requests.ttftS, (nowMs - seq.arriveMs) / 1000);
        }
        seq.generated += 1;
        seq.kvTokens += 1;
        replica.kvUsed += 1;
        replica.counters.generationTokens += 1;
      } else {
        continue;
      }
      if (seq.generated >= getTargetTokens(seq)) {
        finished.push([seq, seq.generated >= seq.outputTokens ? null : seq.failErrorType]);
      }
    }
    replica.counters.promptTokens += replica.stepPrefillTokens;
    countSteps(replica, 1, replica.stepPrefillTokens + replica.stepDecodeSeqs);
  } else {
    replica.segDone = Math.min(replica.segDone, replica.segSteps);
    const delta = replica.segSteps - replica.segDone;
    for (const seq of replica.running) {
      seq.generated += delta;
      seq.kvTokens += delta;
    }
    replica.kvUsed += delta * replica.running.length;
    replica.counters.generationTokens += delta * replica.running.length;
    countSteps(replica, delta, replica.running.length);
    replica.segDone = replica.segSteps;
    for (const seq of replica.running) {
      if (seq.generated >= getTargetTokens(seq)) {
        finished.push([seq, seq.generated >= seq.outputTokens ? null : seq.failErrorType]);
      }
    }
  }
  replica.mode = 'idle';
  for (const [seq] of finished) {
    removeRunning(replica, seq);
    if (seq.generated > 0) seq.lastTokenMs = nowMs;
  }
  for (const [seq, errorType] of finished) host.onFinished(replica, seq, nowMs, errorType);
  planStep(host, replica, nowMs);
}

/** Starts work on a replica that just became ready or was idle. */
export function kickReplica(host: ReplicaHost, replica: Replica, nowMs: number): void {
  if (replica.mode === 'idle') planStep(host, replica, nowMs);
}
