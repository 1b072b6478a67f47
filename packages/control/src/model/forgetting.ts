// Estimators that forget. What a pool could do an hour ago (before a GPU degraded, a model update,
// a change of prompt mix) must fade, at a stated rate: every estimate here halves the weight of
// what it saw once per half-life of event time. Times are the telemetry's (ns since the epoch), so
// a replay of the same telemetry learns the same values however fast it runs.

const NS_PER_S = 1_000_000_000;

/** The weight left of an observation `elapsedNs` old with this half-life: 2^(−elapsed ÷ half-life). */
export function decayWeight(elapsedNs: bigint, halfLifeS: number): number {
  if (elapsedNs <= 0n) return 1;
  if (!(halfLifeS > 0)) return 0;
  return 2 ** -(Number(elapsedNs) / NS_PER_S / halfLifeS);
}

/** A time-weighted mean whose older samples fade with the half-life. */
export interface Ewma {
  /** Weighted mean of the samples; null before the first. */
  value: number | null;
  /** Sum of the samples' remaining weights: how much evidence is left (about the count seen within a half-life). */
  weight: number;
  atNs: bigint;
}

export const EMPTY_EWMA: Ewma = { value: null, weight: 0, atNs: 0n };

/** The mean with one more sample of weight `sampleWeight` (a count of requests, windows…) at `atNs`. */
export function addSample(
  ewma: Ewma,
  sample: number,
  atNs: bigint,
  halfLifeS: number,
  sampleWeight = 1,
): Ewma {
  if (!Number.isFinite(sample) || !(sampleWeight > 0)) return ewma;
  const kept = ewma.value === null ? 0 : ewma.weight * decayWeight(atNs - ewma.atNs, halfLifeS);
  const weight = kept + sampleWeight;
  const value = ((ewma.value ?? 0) * kept + sample * sampleWeight) / weight;
  return { value, weight, atNs: atNs > ewma.atNs ? atNs : ewma.atNs };
}

/**
 * A maximum that decays toward nothing with the half-life unless seen again: "the most this pool has
 * carried" stays trusted while recent and fades after a fault or a change of workload instead of
 * standing forever.
 */
export interface DecayingMax {
  value: number | null;
  atNs: bigint;
}

export const EMPTY_MAX: DecayingMax = { value: null, atNs: 0n };

/** Its value at `atNs`: the last maximum, decayed by the time since. */
export function maxAt(max: DecayingMax, atNs: bigint, halfLifeS: number): number | null {
  return max.value === null ? null : max.value * decayWeight(atNs - max.atNs, halfLifeS);
}

export function observeMax(max: DecayingMax, sample: number, atNs: bigint, halfLifeS: number): DecayingMax {
  if (!Number.isFinite(sample)) return max;
  const current = maxAt(max, atNs, halfLifeS);
  return current !== null && current >= sample
    ? { value: current, atNs: atNs > max.atNs ? atNs : max.atNs }
    : { value: sample, atNs };
}
