import {
  type SimulationOptions,
  prepareRun,
  resolveOracleOptions,
  runSimulation,
} from '../run-simulation.ts';
import type { RunSummary } from '../summary/run-summary.ts';
import { planOracleSchedule } from './plan-oracle-schedule.ts';

/**
 * Target utilizations the oracle is planned at: 0.3 to 1.63 in steps of 6 %. Above 1 the step
 * model's assumed batch of 16 overstates a batched replica's work, so a schedule can still hold.
 */
export const ORACLE_TARGET_UTILIZATIONS: readonly number[] = Array.from(
  { length: 30 },
  (_, i) => Math.round(0.3 * 1.06 ** i * 1000) / 1000,
);

/** Spans the load is averaged over before sizing: one control interval, and five minutes. */
export const ORACLE_SMOOTHING_MS: readonly number[] = [0, 300_000];

export interface OraclePoint {
  targetUtilization: number;
  /** The span the load was averaged over (one control interval, five minutes, or the arrival window). */
  smoothingMs: number;
  summary: RunSummary;
}

export type HindsightOracleOptions = Omit<
  SimulationOptions,
  'policy' | 'lockstep' | 'target' | 'oracleTargetUtilization' | 'oracleSmoothingMs'
>;

/**
 * The hindsight oracle of one run (src/oracle/plan-oracle-schedule.ts states its assumptions): its
 * schedule at each target utilization, with the load taken per control interval, per five minutes
 * and over the whole arrival window (one size for the run, as a static fleet sized in hindsight),
 * simulated on the same seed, workload, faults and fleet as any other policy, so cost and goodput
 * are measured the same way. Points come back cheapest first.
 */
export async function runHindsightOracle(
  options: HindsightOracleOptions,
  utilizations: readonly number[] = ORACLE_TARGET_UTILIZATIONS,
): Promise<OraclePoint[]> {
  const intervalMs = options.controlIntervalMs ?? 30_000;
  const spans = [
    ...new Set(
      [...ORACLE_SMOOTHING_MS, options.durationMs ?? 3_600_000].map((ms) => Math.max(intervalMs, ms)),
    ),
  ];
  const run = prepareRun(options);
  // Many settings plan the same schedule (small pools round to the same counts): simulate each once.
  const simulated = new Map<string, RunSummary>();
  const points: OraclePoint[] = [];
  for (const smoothingMs of spans) {
    for (const targetUtilization of utilizations) {
      const settings = {
        ...options,
        oracleTargetUtilization: targetUtilization,
        oracleSmoothingMs: smoothingMs,
      };
      const schedule = planOracleSchedule(run.workload, run.fleet, {
        durationMs: run.durationMs,
        drainMs: run.drainMs,
        faults: run.faults,
        ...resolveOracleOptions(settings),
      });
      const key = JSON.stringify(schedule.pools.map((p) => p.desired));
      let summary = simulated.get(key);
      if (!summary) {
        summary = await runSimulation({ ...settings, policy: 'oracle' });
        simulated.set(key, summary);
      }
      points.push({ targetUtilization, smoothingMs, summary });
    }
  }
  return points.sort((a, b) => a.summary.costUsd - b.summary.costUsd);
}

/** The cheapest oracle schedule whose goodput is at least `goodput`; null when none reaches it. */
export function findOracleAtGoodput(points: readonly OraclePoint[], goodput: number): OraclePoint | null {
  let best: OraclePoint | null = null;
  for (const p of points) {
    if ((p.summary.goodput ?? 0) < goodput) continue;
    if (best === null || p.summary.costUsd < best.summary.costUsd) best = p;
  }
  return best;
}
