import { describe, expect, it } from 'vitest';
import { createDefaultFleet } from '../fleet/fleet-spec.ts';
import type { Workload } from '../workload/workload-types.ts';
import { Simulation } from './simulation.ts';

// A reversal is a policy scaling a pool against its own previous scaling inside the window. Replica
// changes a fault makes (a cold pool's forced scale-up) are the world's, not the policy's.

function createSim(): Simulation {
  const workload: Workload = {
    name: 'empty',
    description: 'no tasks',
    startEpochMs: Date.UTC(2024, 0, 1),
    tasks: [],
  };
  return new Simulation({
    seed: 1,
    workload,
    fleet: createDefaultFleet(),
    durationMs: 60_000,
    drainMs: 0,
    faults: [],
    metricsIntervalMs: 10_000,
    controlIntervalMs: 0,
    autoscaler: null,
    sink: null,
    sloTtftMs: 2000,
    sloE2eMs: 60_000,
    reversalWindowMs: 300_000,
  });
}

describe('reversals', () => {
  it('count a policy undoing its own scaling inside the window', () => {
    const sim = createSim();
    sim.scalePool('llama8b-h100-east', 2, 'governor');
    sim.scalePool('llama8b-h100-east', 4, 'governor');
    expect(sim.reversals).toBe(1);
  });

  it('do not count a fault scaling against the policy, nor the policy answering a fault', () => {
    const sim = createSim();
    sim.scalePool('llama8b-h100-east', 2, 'governor');
    sim.scalePool('llama8b-h100-east', 4, 'fault:cold-pool');
    sim.scalePool('llama8b-h100-east', 3, 'governor');
    expect(sim.reversals).toBe(0);
  });
});
