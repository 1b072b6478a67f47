import { ENGINE_FIT_MIN_WINDOWS } from './fit-engine-time.ts';

// Internal thresholds of the detectors, each explained by its field's comment. They are not operator
// knobs (those are the `control:` config keys). The bounds below the defaults derive from them, each
// with the reason it follows.

export interface ControlTuning {
  /**
   * How sure a test of a pool against its peers must be before the pool counts as faulty: the
   * one-sided significance (0.99 ≈ z 2.58) of the two-proportion test of its fault share against
   * theirs (health/pool-health.ts). The effect must also matter: more faults than the error budget
   * (1 − control.slo_attainment_target) allows beyond the peers' share.
   */
  evidenceLevel: number;
  /** Error rate above which an outlier's breaker opens rather than only shifting traffic. */
  circuitBreakErrorRate: number;
  /**
   * A pool's speed against its own: engine time against its healthy baseline, prefill ms per token
   * against its uncontended floor. At least slowRatio × as slow is clearly slow — a GPU outlier when
   * its peers are not, load (contention) when it is prefill that slows — and at most usualRatio × is
   * as usual: a peer that counts as normal, a pool prefilling at its uncontended speed. One pair of
   * numbers for every such judgement, so "slow" and "as usual" mean the same wherever they are read.
   * A GPU outlier is then at least slowRatio ÷ usualRatio slower than its median peer, and its load
   * per replica at most latencyMaxLoadRatio × what it was while its baseline was learned — a
   * slowdown that load does not explain.
   */
  slowRatio: number;
  usualRatio: number;
  latencyMaxLoadRatio: number;
  /** Slowdown at which a latency outlier's breaker opens. */
  circuitBreakLatencyRatio: number;
  /** TTFT is queue-bound when queueing is at least this share of it. */
  queueBoundShare: number;
  /** KV-cache usage treated as full. */
  kvSaturation: number;
  /**
   * Failed requests in the short window before that error rate counts: at a few requests a minute,
   * one or two stray errors are noise that neither shedding nor replicas would fix.
   */
  minFailures: number;
  /**
   * Retries per first attempt a retry storm is capped at (the retry budget an Envoy or Linkerd
   * operator sets). A storm is retries at least slowRatio × this while failing (retryStormRatio).
   */
  retryBudget: number;
  /**
   * Before a pool's capacity is known (never saturated, no configured peak, no calm history that
   * allows it), scale in by one replica only while TTFT p95 is clearly inside the SLO
   * (clearlyWithinSloShare) and queueing p95 at most probeMaxQueueSloShare of it — or, outside the
   * SLO, while it prefills at most usualRatio × slower per token than uncontended (long prompts that
   * miss the SLO anyway);
   * verification rolls it back if the SLO breaks. The same bounds mark a pool's load as calm for the
   * calm history.
   */
  probeMaxQueueSloShare: number;
  /**
   * A pool's traffic moves to a peer serving the same model when the peer prefills a token for at
   * most this share of its cost (uncontended speed × GPU price) and meets the SLO as well.
   */
  efficiencyRatio: number;
  /** Largest fraction of replicas removed in one scale-in. */
  maxScaleInFraction: number;
  /**
   * EWMA weight of a new sample in learned baselines; 1 / learningRate samples is an estimator's
   * memory, from which how long a baseline learns before it is trusted and how long the engine fit
   * remembers follow (trustedAfterSamples, engineFitMemoryWindows).
   */
  learningRate: number;
  /**
   * GPU busy time a pool's engines need in the short window before their speed is learned or judged
   * from the runtime counters: a few steps say little.
   */
  engineMinBusyMs: number;
}

export const DEFAULT_TUNING: ControlTuning = {
  evidenceLevel: 0.99,
  circuitBreakErrorRate: 0.25,
  slowRatio: 2,
  usualRatio: 1.3,
  latencyMaxLoadRatio: 1.2,
  circuitBreakLatencyRatio: 3,
  queueBoundShare: 0.4,
  kvSaturation: 0.9,
  minFailures: 5,
  retryBudget: 0.1,
  probeMaxQueueSloShare: 0.1,
  efficiencyRatio: 0.8,
  maxScaleInFraction: 0.5,
  learningRate: 0.3,
  engineMinBusyMs: 2000,
};

/** A prefill share of TTFT that stretches it clearly (slowRatio ×) marks a pool cache-miss-bound. */
export function prefillBoundShare(t: ControlTuning): number {
  return 1 - 1 / t.slowRatio;
}

/** TTFT p95 clearly inside the SLO: the SLO is at least slowRatio × away. */
export function clearlyWithinSloShare(t: ControlTuning): number {
  return 1 / t.slowRatio;
}

/** Healthy ticks a learned baseline needs before it is trusted: its memory, 1 / learningRate. */
export function trustedAfterSamples(t: ControlTuning): number {
  return Math.max(1, Math.round(1 / t.learningRate));
}

/**
 * Windows the engine time fit remembers (older ones fade by 1 − 1/this each window): a baseline keeps
 * 1 / learningRate samples of the one it needs, the fit as many of the ENGINE_FIT_MIN_WINDOWS it needs.
 */
export function engineFitMemoryWindows(t: ControlTuning): number {
  return ENGINE_FIT_MIN_WINDOWS / t.learningRate;
}

/** Retries per first attempt that make a retry storm: clearly (slowRatio ×) past the budget. */
export function retryStormRatio(t: ControlTuning): number {
  return t.slowRatio * t.retryBudget;
}
