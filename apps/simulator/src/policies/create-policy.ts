import type { FleetSpec } from '../fleet/fleet-spec.ts';
import type { Workload } from '../workload/workload-types.ts';
import type { Autoscaler } from './autoscaler-types.ts';
import { createHpaAutoscaler } from './hpa-autoscaler.ts';
import { createKedaAutoscaler } from './keda-autoscaler.ts';
import { sizeStaticFleet } from './static-sizing.ts';
import { createWvaAutoscaler } from './wva-autoscaler.ts';

export const POLICY_NAMES = ['none', 'static-peak', 'static-mean', 'hpa', 'keda', 'wva'] as const;
export type PolicyName = (typeof POLICY_NAMES)[number];

export function isPolicyName(value: string): value is PolicyName {
  return (POLICY_NAMES as readonly string[]).includes(value);
}

/**
 * Applies a baseline policy: static ones resize the fleet's initial (warm) replicas from the
 * workload's estimated peak or mean load; dynamic ones return the autoscaler to run.
 */
export function applyPolicy(
  policy: PolicyName,
  fleet: FleetSpec,
  workload: Workload,
  durationMs: number,
): Autoscaler | null {
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
  }
}
