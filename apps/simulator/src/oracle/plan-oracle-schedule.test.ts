import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FaultSpec } from '../faults/fault-plan.ts';
import { MODEL_8B, MODEL_70B, createDefaultFleet } from '../fleet/fleet-spec.ts';
import { applyPolicy } from '../policies/create-policy.ts';
import { Simulation } from '../sim/simulation.ts';
import type { Workload, WorkloadTask } from '../workload/workload-types.ts';
import { estimateIntervalDemand } from './estimate-interval-demand.ts';
import { type OracleSchedule, computeScheduleCostUsd, planOracleSchedule } from './plan-oracle-schedule.ts';

const INTERVAL_MS = 30_000;
const DURATION_MS = 10 * 60_000;
const DRAIN_MS = 60_000;

interface Arrival {
  atMs: number;
  big: boolean;
  inputTokens: number;
  outputTokens: number;
}

const task = (a: Arrival, index: number): WorkloadTask => ({
  id: `t${index}`,
  startMs: a.atMs,
  type: 'replay',
  tenant: 'default',
  priority: 1,
  model: a.big ? MODEL_70B : MODEL_8B,
  steps: [{ inputTokens: a.inputTokens, outputTokens: a.outputTokens, thinkMs: 0, atOffsetMs: 0 }],
  openLoop: true,
});

const workloadOf = (arrivals: readonly Arrival[]): Workload => ({
  name: 'test',
  description: 'test arrivals',
  startEpochMs: Date.UTC(2026, 0, 1),
  tasks: arrivals.map(task).sort((a, b) => a.startMs - b.startMs),
});

const arrival = fc.record({
  atMs: fc.integer({ min: 0, max: DURATION_MS - 1 }),
  big: fc.boolean(),
  inputTokens: fc.integer({ min: 1, max: 16_000 }),
  outputTokens: fc.integer({ min: 1, max: 2000 }),
});

const plan = (
  arrivals: readonly Arrival[],
  faults: FaultSpec[] = [],
  targetUtilization = 0.7,
  smoothingIntervals = 1,
) =>
  planOracleSchedule(workloadOf(arrivals), createDefaultFleet(), {
    durationMs: DURATION_MS,
    drainMs: DRAIN_MS,
    intervalMs: INTERVAL_MS,
    faults,
    targetUtilization,
    smoothingIntervals,
  });

/** Replicas serving in interval k: asked for continuously since one cold start before (warm at 0). */
const serving = (desired: readonly number[], k: number, lead: number) =>
  Math.min(...desired.slice(Math.max(0, k - lead), k + 1));

describe('hindsight oracle schedule', () => {
  it('has the replicas the known load needs serving in every block it sizes for, cold starts included', () => {
    const smoothing = fc.constantFrom(1, 4, DURATION_MS / INTERVAL_MS);
    fc.assert(
      fc.property(
        // Up to ~10 busy replicas per pool, so that sizing, not the pools' minimum, decides.
        fc.array(arrival, { maxLength: 3000 }),
        fc.double({ min: 0.3, max: 1.6, noNaN: true }),
        smoothing,
        (arrivals, u, blockIntervals) => {
          const fleet = createDefaultFleet();
          const schedule = plan(arrivals, [], u, blockIntervals);
          const demand = estimateIntervalDemand(workloadOf(arrivals), fleet, {
            durationMs: DURATION_MS,
            drainMs: DRAIN_MS,
            intervalMs: INTERVAL_MS,
            faults: [],
          });
          for (const [p, pool] of schedule.pools.entries()) {
            const spec = fleet.pools[p]!;
            const lead = Math.ceil(spec.coldStartMs / INTERVAL_MS);
            // Per block (one interval when unsmoothed): the replica-intervals serving carry its load.
            for (let from = 0; from < pool.desired.length; from += blockIntervals) {
              const ks = pool.desired.slice(from, from + blockIntervals).map((_, i) => from + i);
              const served = ks.reduce((sum, k) => sum + serving(pool.desired, k, lead), 0);
              const load = ks.reduce((sum, k) => sum + Math.max(demand[p]!.work[k]!, demand[p]!.kv[k]!), 0);
              const required = Math.max(
                ks.length * spec.minReplicas,
                Math.min(ks.length * spec.maxReplicas, load / u),
              );
              expect(served).toBeGreaterThanOrEqual(required - 1e-9);
            }
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('never costs less, nor asks for fewer replicas anywhere, when more requests arrive', () => {
    fc.assert(
      fc.property(
        fc.array(arrival, { maxLength: 300 }),
        fc.array(arrival, { minLength: 1, maxLength: 300 }),
        fc.constantFrom(1, 4, DURATION_MS / INTERVAL_MS),
        (base, extra, blockIntervals) => {
          const fleet = createDefaultFleet();
          const less = plan(base, [], 0.7, blockIntervals);
          const more = plan([...base, ...extra], [], 0.7, blockIntervals);
          expect(computeScheduleCostUsd(more, fleet)).toBeGreaterThanOrEqual(
            computeScheduleCostUsd(less, fleet),
          );
          for (const [p, pool] of more.pools.entries())
            for (const [k, n] of pool.desired.entries())
              expect(n).toBeGreaterThanOrEqual(less.pools[p]!.desired[k]!);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('plans for a degraded GPU: its pool gets at least the replicas it would get healthy while the fault lasts', () => {
    const fleet = createDefaultFleet();
    const degraded: FaultSpec = {
      kind: 'gpu-degradation',
      target: { pool: fleet.pools[0]!.name },
      startMs: 180_000,
      endMs: 480_000,
      params: { slowdown: 2.5, errorRate: 0.05 },
    };
    const arrivals = Array.from({ length: 600 }, (_, i) => ({
      atMs: i * 1000,
      big: false,
      inputTokens: 3000,
      outputTokens: 200,
    }));
    const healthy = plan(arrivals).pools[0]!;
    const slow = plan(arrivals, [degraded]).pools[0]!;
    for (const [k, n] of slow.need.entries()) expect(n).toBeGreaterThanOrEqual(healthy.need[k]!);
    // Inside the window a 2.5× slower pool needs more replicas for the same work.
    const inside = Math.floor(300_000 / INTERVAL_MS);
    expect(slow.need[inside]!).toBeGreaterThan(healthy.need[inside]!);
  });

  it('asks for a load step one cold start ahead, so the simulator has the replicas ready when it arrives', () => {
    // Quiet for 6 minutes, then one long prompt per 100 ms on the 8B pools.
    const stepAtMs = 6 * 60_000;
    const arrivals: Arrival[] = [];
    for (let t = 0; t < stepAtMs; t += 5000)
      arrivals.push({ atMs: t, big: false, inputTokens: 1000, outputTokens: 100 });
    for (let t = stepAtMs; t < DURATION_MS; t += 100)
      arrivals.push({ atMs: t, big: false, inputTokens: 4000, outputTokens: 100 });
    const workload = workloadOf(arrivals);
    const fleet = createDefaultFleet();
    const autoscaler = applyPolicy('oracle', fleet, workload, {
      durationMs: DURATION_MS,
      drainMs: DRAIN_MS,
      faults: [],
      oracle: { intervalMs: INTERVAL_MS, targetUtilization: 0.7 },
    });
    const schedule: OracleSchedule = plan(arrivals);
    const sim = new Simulation({
      seed: 1,
      workload,
      fleet,
      durationMs: DURATION_MS,
      drainMs: DRAIN_MS,
      faults: [],
      metricsIntervalMs: 0,
      controlIntervalMs: 0,
      autoscaler,
      sink: null,
      sloTtftMs: 2000,
      sloE2eMs: 60_000,
      reversalWindowMs: 300_000,
    });
    const stepInterval = stepAtMs / INTERVAL_MS;
    const h100 = schedule.pools[0]!;
    // The step needs more than the quiet minutes before it, and the extra is asked for before it.
    expect(h100.need[stepInterval]!).toBeGreaterThan(h100.need[stepInterval - 7]!);
    const askedAt = h100.desired.findIndex((n) => n >= h100.need[stepInterval]!);
    expect(askedAt).toBeLessThanOrEqual(stepInterval - Math.ceil(fleet.pools[0]!.coldStartMs / INTERVAL_MS));
    for (let k = 0; k < DURATION_MS / INTERVAL_MS; k++) {
      sim.runUntil(k * INTERVAL_MS + 1, Number.POSITIVE_INFINITY);
      for (const [p, pool] of sim.observePools().entries())
        expect(pool.ready, `${pool.name} at interval ${k}`).toBeGreaterThanOrEqual(
          schedule.pools[p]!.need[k]!,
        );
    }
  });
});
