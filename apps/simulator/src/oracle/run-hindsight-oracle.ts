import { type SimulationOptions, runSimulation } from '../run-simulation.ts';
import type { RunSummary } from '../summary/run-summary.ts';

/**
 * Target utilizations the oracle is simulated at: 0.3 to 1.6 in steps of 8 %. Above 1 the step
 * model's assumed batch of 16 overstates a batched replica's work, so a schedule can still hold.
 */
export const ORACLE_TARGET_UTILIZATIONS: readonly number[] = Array.from(
  { length: 23 },
  (_, i) => Math.round(0.3 * 1.08 ** i * 1000) / 1000,
);

export interface OraclePoint {
  targetUtilization: number;
  summary: RunSummary;
}

/**
 * The hindsight oracle of one run (src/oracle/plan-oracle-schedule.ts states its assumptions): its
 * schedule at each target utilization, simulated on the same seed, workload, faults and fleet as any
 * other policy, so cost and goodput are measured the same way. Points come back cheapest first.
 */
export async function runHindsightOracle(
  options: Omit<SimulationOptions, 'policy' | 'lockstep' | 'target' | 'oracleTargetUtilization'>,
  utilizations: readonly number[] = ORACLE_TARGET_UTILIZATIONS,
): Promise<OraclePoint[]> {
  const points: OraclePoint[] = [];
  for (const targetUtilization of utilizations) {
    const summary = await runSimulation({
      ...options,
      policy: 'oracle',
      oracleTargetUtilization: targetUtilization,
    });
    points.push({ targetUtilization, summary });
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
