import type { FaultSpec } from '../faults/fault-plan.ts';
import type { FleetSpec } from '../fleet/fleet-spec.ts';
import { createOracleAutoscaler } from '../oracle/create-oracle-autoscaler.ts';
import { planOracleSchedule } from '../oracle/plan-oracle-schedule.ts';
import type { Workload } from '../workload/workload-types.ts';
import type { Autoscaler } from './autoscaler-types.ts';
import { createHpaAutoscaler } from './hpa-autoscaler.ts';
import { createKedaAutoscaler } from './keda-autoscaler.ts';
import { sizeStaticFleet } from './static-sizing.ts';
import { createWvaAutoscaler } from './wva-autoscaler.ts';

export const POLICY_NAMES = ['none', 'static-peak', 'static-mean', 'hpa', 'keda', 'wva', 'oracle'] as const;
export type PolicyName = (typeof POLICY_NAMES)[number];

export function isPolicyName(value: string): value is PolicyName {
  return (POLICY_NAMES as readonly string[]).includes(value);
}

/** The run a policy is applied to; only the hindsight oracle looks past the arrivals. */
export interface PolicyContext {
  durationMs: number;
  drainMs: number;
  faults: readonly FaultSpec[];
  /** The oracle's control interval (the lockstep interval), target utilization and smoothing blocks. */
  oracle: { intervalMs: number; targetUtilization: number; smoothingIntervals?: number };
}

/** The oracle's target utilization when none is given (runHindsightOracle sweeps it). */
export const DEFAULT_ORACLE_TARGET_UTILIZATION = 0.7;

/**
 * Applies a policy: static ones resize the fleet's initial (warm) replicas from the workload's
 * estimated peak or mean load; dynamic ones return the autoscaler to run; the hindsight oracle sizes
 * the initial replicas and plays its schedule (src/oracle/plan-oracle-schedule.ts).
 */
export function applyPolicy(
  policy: PolicyName,
  fleet: FleetSpec,
  workload: Workload,
  context: PolicyContext,
): Autoscaler | null {
  const { durationMs } = context;
  switch (policy) {
    case 'none':
      return null;
    case 'static-peak':
    case 'static-mean': {
      const sizes = sizeStaticFleet(workload, fleet, durationMs, policy === 'static-peak' ? 'peak' : 'mean');
      for (const pool of fleet.pools) pool.replicas = sizes.get(pool.name) ?? pool.replicas;
      return null;
    }
    case 'hpa':
      return createHpaAutoscaler();
    case 'keda':
      return createKedaAutoscaler();
    case 'wva':
      return createWvaAutoscaler();
    case 'oracle': {
      const schedule = planOracleSchedule(workload, fleet, {
        durationMs,
        drainMs: context.drainMs,
        faults: context.faults,
        ...context.oracle,
      });
      for (const pool of fleet.pools)
        pool.replicas = schedule.pools.find((p) => p.pool === pool.name)?.desired[0] ?? pool.replicas;
      return createOracleAutoscaler(schedule);
    }
  }
}
