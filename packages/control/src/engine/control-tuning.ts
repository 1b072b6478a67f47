// Internal thresholds of the detectors, each explained by its field's comment. They are not operator
// knobs (those are the `control:` config keys) and are being replaced by the pool model and the
// objective (src/model, src/objective; packages/control/README.md).

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
   * An outlier must also be ≥ latencyPeerFactor × slower than its peers (each against its own
   * baseline) while its load per replica is at most latencyMaxLoadRatio × what it was then — a
   * slowdown that load does not explain.
   */
  slowRatio: number;
  usualRatio: number;
  latencyPeerFactor: number;
  latencyMaxLoadRatio: number;
  /** Ticks of healthy history a pool needs before its baseline is trusted. */
  minBaselineSamples: number;
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
  /** Retries per first attempt above which a retry budget is proposed, and the budget it sets. */
  retryRatioHigh: number;
  retryBudget: number;
  /** Prefill share of TTFT and cache hit rate that mark a pool cache-miss-bound. */
  prefillBoundShare: number;
  /**
   * Before a pool's capacity is known (never saturated, no configured peak, no calm history that
   * allows it), scale in by one replica only while TTFT p95 is at most probeMaxSloShare of the SLO
   * and queueing p95 at most probeMaxQueueSloShare of it — or, outside the SLO, while it prefills at
   * most usualRatio × slower per token than uncontended (long prompts that miss the SLO anyway);
   * verification rolls it back if the SLO breaks. The same bounds mark a pool's load as calm for the
   * calm history.
   */
  probeMaxSloShare: number;
  probeMaxQueueSloShare: number;
  /**
   * A pool's traffic moves to a peer serving the same model when the peer prefills a token for at
   * most this share of its cost (uncontended speed × GPU price) and meets the SLO as well.
   */
  efficiencyRatio: number;
  /** Largest fraction of replicas removed in one scale-in. */
  maxScaleInFraction: number;
  /** EWMA weight of a new sample in learned baselines. */
  learningRate: number;
  /**
   * GPU busy time a pool's engines need in the short window before their speed is learned or judged
   * from the runtime counters: a few steps say little.
   */
  engineMinBusyMs: number;
  /**
   * How many healthy windows the engine time fit remembers (older ones fade by 1 − 1/this each
   * window). It is trusted from ENGINE_FIT_MIN_WINDOWS on (fit-engine-time.ts).
   */
  engineFitMemoryWindows: number;
}

export const DEFAULT_TUNING: ControlTuning = {
  evidenceLevel: 0.99,
  circuitBreakErrorRate: 0.25,
  slowRatio: 2,
  usualRatio: 1.3,
  latencyPeerFactor: 1.6,
  latencyMaxLoadRatio: 1.2,
  minBaselineSamples: 3,
  circuitBreakLatencyRatio: 3,
  queueBoundShare: 0.4,
  kvSaturation: 0.9,
  minFailures: 5,
  retryRatioHigh: 0.2,
  retryBudget: 0.1,
  prefillBoundShare: 0.5,
  probeMaxSloShare: 0.5,
  probeMaxQueueSloShare: 0.1,
  efficiencyRatio: 0.8,
  maxScaleInFraction: 0.5,
  learningRate: 0.3,
  engineMinBusyMs: 2000,
  engineFitMemoryWindows: 20,
};
