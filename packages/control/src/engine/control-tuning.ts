import { ENGINE_FIT_MIN_WINDOWS } from './fit-engine-time.ts';

// The control loop's internal knobs, each explained by its field's comment. They are not operator
// settings (those are the `control:` config keys). Every other bound the detectors read is derived
// below from these and the operator's error budget, with the reason it follows.

export interface ControlTuning {
  /**
   * How sure a statistical test must be before the loop acts on what it says: a pool's faults against
   * its peers' (a two-proportion test, health/pool-health.ts), a fleet's failures against the error
   * budget (a binomial test, isFailing). One-sided significance; 0.99 ≈ z 2.58.
   */
  evidenceLevel: number;
  /** Error rate above which an outlier's breaker opens rather than only shifting traffic. */
  circuitBreakErrorRate: number;
  /**
   * A pool's speed against its own: engine time against its healthy baseline, prefill ms per token
   * against its uncontended floor, TTFT against its unqueued part. At least slowRatio × as slow is
   * clearly slow — a GPU outlier when its peers are not, load when it is the queue or prefill that
   * stretches — and at most usualRatio × is as usual: a peer that counts as normal, a pool prefilling
   * at its uncontended speed, a load per replica like the one its baseline was learned at, a cost
   * difference that is noise. One pair of numbers for every such judgement.
   */
  slowRatio: number;
  usualRatio: number;
  /** Slowdown at which a latency outlier's breaker opens. */
  circuitBreakLatencyRatio: number;
  /**
   * Retries per first attempt a retry storm is capped at (the retry budget an Envoy or Linkerd
   * operator sets). A storm is retries at least slowRatio × this while failing (retryStormRatio).
   */
  retryBudget: number;
  /** Largest fraction of replicas removed in one scale-in. */
  maxScaleInFraction: number;
  /**
   * EWMA weight of a new sample in learned baselines; 1 / learningRate samples is an estimator's
   * memory, from which how long it learns before it is trusted and how long the engine fit remembers
   * follow (trustedAfterSamples, engineFitMemoryWindows).
   */
  learningRate: number;
}

export const DEFAULT_TUNING: ControlTuning = {
  evidenceLevel: 0.99,
  circuitBreakErrorRate: 0.25,
  slowRatio: 2,
  usualRatio: 1.3,
  circuitBreakLatencyRatio: 3,
  retryBudget: 0.1,
  maxScaleInFraction: 0.5,
  learningRate: 0.3,
};

/**
 * A share of TTFT that stretches it clearly (slowRatio ×): TTFT ÷ (TTFT − part) ≥ slowRatio when the
 * part is at least 1 − 1/slowRatio of it. Queueing that large makes a pool load-bound, as prefill per
 * token slowRatio × its floor does; prefill that large makes it cache-miss-bound. Half of it is
 * negligible.
 */
export function boundShare(t: ControlTuning): number {
  return 1 - 1 / t.slowRatio;
}

/**
 * TTFT p95 near the SLO: within the as-usual band (usualRatio ×) below it, as close as noise puts it
 * (0.77 at the defaults). A load-bound pool this near is scaled up before its cold start lets it
 * break the SLO; a cache-miss-bound one this near has its affinity restored.
 */
export function nearSloShare(t: ControlTuning): number {
  return 1 / t.usualRatio;
}

/** TTFT p95 clearly inside the SLO: the SLO is at least slowRatio × away. */
export function clearlyWithinSloShare(t: ControlTuning): number {
  return 1 / t.slowRatio;
}

/** A peer is cheaper per token only beyond the as-usual band: at most 1/usualRatio of the cost. */
export function cheaperRatio(t: ControlTuning): number {
  return 1 / t.usualRatio;
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

/**
 * GPU busy time a pool's engines need in a window before their speed is learned or judged from the
 * runtime counters. Busy time is DCGM_FI_DEV_GPU_UTIL × time, and DCGM reports utilization in whole
 * percent: a reading is off by up to half a point. A replica must be busy enough that this error
 * stays inside the as-usual band (usualRatio − 1) of its busy time: 0.5 % ÷ 0.3 ≈ 1.7 % of the window.
 */
export function engineMinBusyMs(t: ControlTuning, windowMs: number, replicas: number): number {
  const halfPoint = 0.005;
  return (halfPoint / (t.usualRatio - 1)) * windowMs * Math.max(1, replicas);
}
