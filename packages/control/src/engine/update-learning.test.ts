import { describe, expect, test } from 'vitest';
import type { PoolLearning } from './control-types.ts';
import { CAPACITY_HALF_LIFE_S, fadeLearnedCapacities } from './update-learning.ts';

const S = 1_000_000_000n;
const T0 = 1_700_000_000n * S;

function learned(atNs: bigint | null): PoolLearning {
  return {
    peakRatePerReplica: 12,
    saturatedRatePerReplica: 10,
    calmRatePerReplica: 8,
    calmGoodput: 0.97,
    speedBaseline: 0.2,
    loadBaselinePerReplicaPerS: 6,
    prefillFloorMsPerToken: 0.1,
    fastestPrefillFloorMsPerToken: 0.08,
    engineFit: null,
    engineSlowAtNs: null,
    darkAtNs: null,
    healthySamples: 10,
    outlierStreak: 0,
    capacitiesAtNs: atNs,
  };
}

describe('learned capacities forget', () => {
  test('halve per half-life of event time unless seen again; other baselines are untouched', () => {
    const l = learned(T0);
    fadeLearnedCapacities(l, T0 + BigInt(CAPACITY_HALF_LIFE_S) * S);
    expect(l.peakRatePerReplica).toBeCloseTo(6, 9);
    expect(l.saturatedRatePerReplica).toBeCloseTo(5, 9);
    expect(l.calmRatePerReplica).toBeCloseTo(4, 9);
    expect(l.calmGoodput).toBe(0.97);
    expect(l.loadBaselinePerReplicaPerS).toBe(6);
  });

  test('the fade depends only on event time: ticks in between or a replay give the same values', () => {
    const once = learned(T0);
    fadeLearnedCapacities(once, T0 + 3600n * S);
    const stepwise = learned(T0);
    for (let t = 30n; t <= 3600n; t += 30n) fadeLearnedCapacities(stepwise, T0 + t * S);
    expect(stepwise.calmRatePerReplica).toBeCloseTo(once.calmRatePerReplica!, 9);
    // Within one control window (5 min) a capacity fades by well under 1 %.
    const window = learned(T0);
    fadeLearnedCapacities(window, T0 + 300n * S);
    expect(window.saturatedRatePerReplica! / 10).toBeGreaterThan(0.99);
  });

  test('time going backwards (a late dry run) does not restore or fade anything', () => {
    const l = learned(T0 + 3600n * S);
    fadeLearnedCapacities(l, T0);
    expect(l).toEqual(learned(T0 + 3600n * S));
    const fresh = learned(null);
    fadeLearnedCapacities(fresh, T0);
    expect(fresh.peakRatePerReplica).toBe(12);
    expect(fresh.capacitiesAtNs).toBe(T0);
  });
});
