import { describe, expect, it } from 'vitest';
import { createDefaultFleet } from '../fleet/fleet-spec.ts';
import type { PoolObservation } from './autoscaler-types.ts';
import { createHpaAutoscaler } from './hpa-autoscaler.ts';
import { createKedaAutoscaler } from './keda-autoscaler.ts';
import { createWvaAutoscaler } from './wva-autoscaler.ts';

const spec = { ...createDefaultFleet().pools[0]!, minReplicas: 1, maxReplicas: 10 };

/** A pool whose ready replicas were busy `utilPct` of each 15 s period since t = 0. */
function observePool(
  desired: number,
  replicas: Array<{ busyMs: number; kv?: number; waiting?: number }>,
  starting = 0,
): PoolObservation {
  return {
    name: spec.name,
    spec,
    desired,
    ready: replicas.length,
    starting,
    replicas: replicas.map((r, i) => ({
      id: `r${i}`,
      kvUsage: r.kv ?? 0,
      waiting: r.waiting ?? 0,
      running: 1,
      busyMs: r.busyMs,
      readyMs: 0,
    })),
  };
}

/** Drives an HPA through periods of given utilization; returns the desired count after each sync. */
function runHpa(periods: number[], initial: number): number[] {
  const hpa = createHpaAutoscaler();
  let desired = initial;
  const busy = new Map<number, number>();
  const history: number[] = [];
  periods.forEach((utilPct, i) => {
    const nowMs = (i + 1) * 15_000;
    const replicas = Array.from({ length: desired }, (_, r) => {
      busy.set(r, (busy.get(r) ?? (i * 15_000 * utilPct) / 100) + (15_000 * utilPct) / 100);
      return { busyMs: busy.get(r)! };
    });
    for (const d of hpa.decide(nowMs, [observePool(desired, replicas)])) desired = d.replicas;
    history.push(desired);
  });
  return history;
}

describe('HPA on GPU utilization (target 70%)', () => {
  it('scales up at once to ⌈current × metric / target⌉', () => {
    expect(runHpa([100], 2)[0]).toBe(3);
    expect(runHpa([100, 100, 100], 4)).toEqual([6, 9, 10]);
  });

  it('does nothing inside the 10% tolerance', () => {
    expect(runHpa([75, 65, 76], 4)).toEqual([4, 4, 4]);
  });

  it('waits 5 minutes of lower recommendations before scaling down', () => {
    // One busy period, then idle: the recommendation drops to 1 at once, the replicas do not.
    const history = runHpa([70, ...Array(25).fill(10)], 4);
    const dropIndex = history.findIndex((d) => d < 4);
    // Sync 1 recommends 4; it leaves the 300 s window at sync 21 (t = 315 s).
    expect(dropIndex).toBe(20);
    expect(history[dropIndex]).toBe(1);
    expect(history.slice(0, dropIndex)).toEqual(Array(dropIndex).fill(4));
  });
});

describe('KEDA on vllm:num_requests_waiting (threshold 5)', () => {
  it('asks for ⌈waiting / 5⌉ replicas and holds scale-down for the 360 s cooldown', () => {
    const keda = createKedaAutoscaler();
    expect(keda.intervalMs).toBe(15_000);
    const up = keda.decide(15_000, [
      observePool(2, [
        { busyMs: 0, waiting: 13 },
        { busyMs: 0, waiting: 10 },
      ]),
    ]);
    expect(up).toEqual([{ pool: spec.name, replicas: 5 }]);
    let desired = 5;
    let scaledDownAt = -1;
    for (let t = 30_000; t <= 600_000; t += 15_000) {
      const replicas = Array.from({ length: desired }, () => ({ busyMs: 0, waiting: 0 }));
      for (const d of keda.decide(t, [observePool(desired, replicas)])) {
        desired = d.replicas;
        if (scaledDownAt < 0) scaledDownAt = t;
      }
    }
    expect(desired).toBe(1);
    // The 5-replica recommendation at 15 s expires 360 s later.
    expect(scaledDownAt).toBe(375_000);
  });
});

describe('WVA saturation scaling', () => {
  const wva = createWvaAutoscaler();
  it('scales up by one when spare KV falls below 0.1', () => {
    const pool = observePool(3, [
      { busyMs: 0, kv: 0.75 },
      { busyMs: 0, kv: 0.72 },
      { busyMs: 0, kv: 0.85 },
    ]);
    expect(wva.decide(30_000, [pool])).toEqual([{ pool: spec.name, replicas: 4 }]);
  });

  it('scales up by one when spare queue falls below 3', () => {
    const pool = observePool(2, [
      { busyMs: 0, kv: 0.1, waiting: 3 },
      { busyMs: 0, kv: 0.1, waiting: 2 },
    ]);
    expect(wva.decide(30_000, [pool])).toEqual([{ pool: spec.name, replicas: 3 }]);
  });

  it('scales in by one only when N−1 replicas keep both spare margins', () => {
    const light = observePool(3, [
      { busyMs: 0, kv: 0.2 },
      { busyMs: 0, kv: 0.2 },
      { busyMs: 0, kv: 0.2 },
    ]);
    expect(wva.decide(30_000, [light])).toEqual([{ pool: spec.name, replicas: 2 }]);
    // 3 × 0.5 spread over 2 = 0.75 would leave spare KV 0.05 < 0.1: keep 3.
    const busy = observePool(3, [
      { busyMs: 0, kv: 0.5 },
      { busyMs: 0, kv: 0.5 },
      { busyMs: 0, kv: 0.5 },
    ]);
    expect(wva.decide(30_000, [busy])).toEqual([]);
  });

  it('waits while a scale-up is still starting', () => {
    const pool = observePool(
      4,
      [
        { busyMs: 0, kv: 0.9 },
        { busyMs: 0, kv: 0.9 },
      ],
      2,
    );
    expect(wva.decide(30_000, [pool])).toEqual([]);
  });
});
