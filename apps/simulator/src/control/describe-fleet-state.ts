import { formatSimTime } from '../engine/sim-time.ts';
import type { Simulation } from '../sim/simulation.ts';

export interface FleetState {
  simTime: string;
  simTimeMs: number;
  finished: boolean;
  pools: Array<{
    name: string;
    model: string;
    gpuType: string;
    region: string;
    gpusPerReplica: number;
    desired: number;
    running: number;
    starting: number;
    draining: number;
    weight: number;
    breakerOpen: boolean;
    breakerUntil: string | null;
    regionDown: boolean;
    waiting: number;
    inBatch: number;
  }>;
  admission: { minPriorityByModel: Record<string, number> };
  retryBudget: { maxRetryRatio: number | null };
  downgrades: Array<{ fromModel: string; toModel: string; fraction: number }>;
  regionsDown: string[];
  actions: number;
  reversals: number;
  /** The last 50 applied actions and replica-count changes, oldest first. */
  recentActions: Array<{ at: string; source: string; kind: string; detail: string }>;
  liveRequests: number;
}

/** The body of GET /state: what an operator would check after applying an action. */
export function describeFleetState(sim: Simulation): FleetState {
  const at = (ms: number) => formatSimTime(sim.startEpochMs, ms);
  return {
    simTime: at(sim.nowMs),
    simTimeMs: sim.nowMs,
    finished: sim.finished,
    pools: sim.pools.map((p) => ({
      name: p.spec.name,
      model: p.spec.model,
      gpuType: p.spec.gpuType,
      region: p.spec.region,
      gpusPerReplica: p.spec.gpusPerReplica,
      desired: p.desired,
      running: p.replicas.filter((r) => r.status === 'running').length,
      starting: p.replicas.filter((r) => r.status === 'starting').length,
      draining: p.replicas.filter((r) => r.status === 'draining').length,
      weight: p.weight,
      breakerOpen: p.breakerOpen,
      breakerUntil: p.breakerUntilMs === null ? null : at(p.breakerUntilMs),
      regionDown: sim.regionsDown.has(p.spec.region),
      waiting: p.replicas.reduce((s, r) => s + r.waitingCount, 0),
      inBatch: p.replicas.reduce((s, r) => s + r.running.length, 0),
    })),
    admission: { minPriorityByModel: Object.fromEntries(sim.minPriorityByModel) },
    retryBudget: { maxRetryRatio: sim.retryBudgetRatio },
    downgrades: [...sim.downgrades].map(([fromModel, d]) => ({
      fromModel,
      toModel: d.toModel,
      fraction: d.fraction,
    })),
    regionsDown: [...sim.regionsDown],
    actions: sim.actions,
    reversals: sim.reversals,
    recentActions: sim.actionLog
      .slice(-50)
      .map((a) => ({ at: at(a.atMs), source: a.source, kind: a.kind, detail: a.detail })),
    liveRequests: sim.liveAttempts,
  };
}
