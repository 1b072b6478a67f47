import type { FleetSpec } from '../fleet/fleet-spec.ts';

export const SCENARIO_NAMES = [
  'none',
  'gpu-degradation',
  'preemption',
  'retry-storm',
  'retry-storm-budget',
  'region-outage',
  'cold-pool',
  'agentic-surge',
] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];
export type FaultKind = Exclude<ScenarioName, 'none'>;

export function isScenarioName(value: string): value is ScenarioName {
  return (SCENARIO_NAMES as readonly string[]).includes(value);
}

export interface FaultTarget {
  pool?: string;
  region?: string;
  tenant?: string;
}

/** A fault as planned; `startMs`/`endMs` are sim ms and become the ground truth of the summary. */
export interface FaultSpec {
  kind: FaultKind;
  target: FaultTarget;
  startMs: number;
  endMs: number;
  params: Record<string, number>;
}

export interface FaultPlanOptions {
  durationMs: number;
  /** Default: 30% into the run. */
  faultStartMs?: number;
  /** Default: 20% of the run, at least 5 minutes. */
  faultDurationMs?: number;
  /** Pool, region or tenant name, by fault kind. */
  faultTarget?: string;
}

/** Parameters of each fault; documented in the README. */
export const FAULT_PARAMS = {
  gpuDegradation: { slowdown: 2.5, errorRate: 0.05 },
  preemption: { everyMs: 180_000 },
  retryStorm: { crashShare: 0.5, timeoutMs: 15_000, maxAttempts: 6, backoffMs: 100, budgetRatio: 0.1 },
  coldPool: { addReplicas: 2, coldStartFactor: 2, warmupMs: 300_000, warmSlowdown: 1.6 },
  agenticSurge: { tasksPerS: 0.05, minSteps: 100, maxSteps: 300 },
} as const;

export const SURGE_TENANT = 'surge-agents';

/** Builds the faults of a scenario against a fleet, with defaults for timing and target. */
export function planScenario(
  scenario: ScenarioName,
  fleet: FleetSpec,
  options: FaultPlanOptions,
): FaultSpec[] {
  if (scenario === 'none') return [];
  const startMs = options.faultStartMs ?? Math.round(options.durationMs * 0.3);
  const lengthMs = options.faultDurationMs ?? Math.max(300_000, Math.round(options.durationMs * 0.2));
  const endMs = startMs + lengthMs;
  const firstPool = fleet.pools[0]!;
  const poolTarget = (): FaultTarget => {
    const name = options.faultTarget ?? firstPool.name;
    if (!fleet.pools.some((p) => p.name === name)) {
      throw new Error(
        `fault target "${name}" is not a pool of the fleet (${fleet.pools.map((p) => p.name).join(', ')})`,
      );
    }
    return { pool: name };
  };
  switch (scenario) {
    case 'gpu-degradation':
      return [
        { kind: scenario, target: poolTarget(), startMs, endMs, params: { ...FAULT_PARAMS.gpuDegradation } },
      ];
    case 'preemption':
      return [
        { kind: scenario, target: poolTarget(), startMs, endMs, params: { ...FAULT_PARAMS.preemption } },
      ];
    case 'retry-storm':
    case 'retry-storm-budget': {
      const { budgetRatio, ...rest } = FAULT_PARAMS.retryStorm;
      const params: Record<string, number> = { ...rest };
      if (scenario === 'retry-storm-budget') params.budgetRatio = budgetRatio;
      return [{ kind: scenario, target: poolTarget(), startMs, endMs, params }];
    }
    case 'region-outage': {
      const regions = [...new Set(fleet.pools.map((p) => p.region))];
      // Default: a region whose models are also served elsewhere, so failover is possible.
      const fallback =
        regions.find((region) =>
          fleet.pools
            .filter((p) => p.region === region)
            .every((p) => fleet.pools.some((q) => q.model === p.model && q.region !== region)),
        ) ?? regions[regions.length - 1]!;
      const region = options.faultTarget ?? fallback;
      if (!regions.includes(region))
        throw new Error(`fault target "${region}" is not a region of the fleet (${regions.join(', ')})`);
      return [{ kind: scenario, target: { region }, startMs, endMs, params: {} }];
    }
    case 'cold-pool': {
      const target = poolTarget();
      const pool = fleet.pools.find((p) => p.name === target.pool)!;
      const p = FAULT_PARAMS.coldPool;
      // The window covers the slow cold start and the warm-up that follows it.
      const coldEndMs = startMs + pool.coldStartMs * p.coldStartFactor + p.warmupMs;
      return [{ kind: scenario, target, startMs, endMs: coldEndMs, params: { ...p } }];
    }
    case 'agentic-surge':
      return [
        {
          kind: scenario,
          target: { tenant: options.faultTarget ?? SURGE_TENANT },
          startMs,
          endMs,
          params: { ...FAULT_PARAMS.agenticSurge },
        },
      ];
  }
}
