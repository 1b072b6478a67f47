import { afterEach, describe, expect, it } from 'vitest';
import { createDefaultFleet } from '../fleet/fleet-spec.ts';
import { runSimulation } from '../run-simulation.ts';
import { Simulation } from '../sim/simulation.ts';
import { createWorkload } from '../workload/create-workload.ts';
import { resolveDataDir } from '../workload/read-data-file.ts';
import { startActuatorServer } from './actuator-server.ts';
import type { ActuatorServer } from './actuator-server.ts';
import { createActionApplier } from './apply-control-action.ts';
import type { FleetState } from './describe-fleet-state.ts';

const POOL_70B = 'llama70b-h100-east';

function createSim(): Simulation {
  const durationMs = 30 * 60_000;
  return new Simulation({
    seed: 1,
    workload: createWorkload('azure-conv', { seed: 1, durationMs, dataDir: resolveDataDir() }),
    fleet: createDefaultFleet(),
    durationMs,
    drainMs: 600_000,
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

const post = (server: ActuatorServer, body: unknown) =>
  fetch(`${server.url}/actions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
const getState = async (server: ActuatorServer) =>
  (await (await fetch(`${server.url}/state`)).json()) as FleetState;
const poolState = (state: FleetState, name: string) => state.pools.find((p) => p.name === name)!;
const action = (id: string, kind: string, target: Record<string, string>, body: Record<string, unknown>) => ({
  id,
  recommendationId: `rec-${id}`,
  type: 'apply',
  kind,
  target,
  action: body,
  at: '2023-11-16T18:20:00Z',
});

describe('actuator endpoint', () => {
  let server: ActuatorServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });

  it('scales at the current simulated time, with a cold start, and applies an id only once', async () => {
    const sim = createSim();
    server = await startActuatorServer(sim, createActionApplier(sim), { port: 0 });
    sim.runUntil(120_000, Number.POSITIVE_INFINITY);
    const response = await post(server, action('a1', 'scale', { pool: POOL_70B }, { from: 2, to: 4 }));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      id: 'a1',
      status: 'applied',
      appliedAt: '2023-11-16T18:17:46.680Z',
    });
    let state = await getState(server);
    expect(poolState(state, POOL_70B)).toMatchObject({ desired: 4, running: 2, starting: 2 });

    const again = await post(server, action('a1', 'scale', { pool: POOL_70B }, { from: 4, to: 8 }));
    expect(await again.json()).toMatchObject({ id: 'a1', status: 'duplicate' });
    expect(poolState(await getState(server), POOL_70B).desired).toBe(4);

    // The 70B cold start is 7 minutes of simulated time.
    sim.runUntil(120_000 + 419_000, Number.POSITIVE_INFINITY);
    expect(poolState(await getState(server), POOL_70B).running).toBe(2);
    sim.runUntil(120_000 + 421_000, Number.POSITIVE_INFINITY);
    state = await getState(server);
    expect(poolState(state, POOL_70B)).toMatchObject({ running: 4, starting: 0 });
    expect(state.actions).toBe(1);
  });

  it('opens a circuit breaker that closes after its duration, and shifts traffic away meanwhile', async () => {
    const sim = createSim();
    server = await startActuatorServer(sim, createActionApplier(sim), { port: 0 });
    sim.runUntil(60_000, Number.POSITIVE_INFINITY);
    await post(
      server,
      action('b1', 'circuit_break', { pool: 'llama8b-a100-west' }, { open: true, durationS: 120 }),
    );
    const before =
      sim.getPool('llama8b-a100-west')!.stats.requests +
      sim.getPool('llama8b-a100-west')!.replicas.reduce((s, r) => s + r.running.length + r.waitingCount, 0);
    expect(poolState(await getState(server), 'llama8b-a100-west').breakerOpen).toBe(true);
    sim.runUntil(170_000, Number.POSITIVE_INFINITY);
    // Only requests already routed before the breaker opened reach the pool.
    expect(sim.getPool('llama8b-a100-west')!.stats.requests).toBeLessThanOrEqual(before);
    sim.runUntil(181_000, Number.POSITIVE_INFINITY);
    expect(poolState(await getState(server), 'llama8b-a100-west').breakerOpen).toBe(false);
  });

  it('sheds new low-priority tasks, sets a retry budget and a downgrade, and rejects malformed actions', async () => {
    const sim = createSim();
    server = await startActuatorServer(sim, createActionApplier(sim), { port: 0 });
    sim.runUntil(60_000, Number.POSITIVE_INFINITY);
    expect((await post(server, action('s1', 'shed_load', {}, { minPriority: 3 }))).status).toBe(200);
    expect((await post(server, action('r1', 'retry_budget', {}, { maxRetryRatio: 0.1 }))).status).toBe(200);
    const downgrade = action(
      'd1',
      'downgrade_model',
      {},
      { fromModel: 'llama-3.1-70b-instruct', toModel: 'llama-3.1-8b-instruct', fraction: 0.5 },
    );
    expect((await post(server, downgrade)).status).toBe(200);
    const rejectedBefore = sim.outcomes.rejected;
    sim.runUntil(120_000, Number.POSITIVE_INFINITY);
    expect(sim.outcomes.rejected).toBeGreaterThan(rejectedBefore + 100);
    const state = await getState(server);
    expect(state.admission.minPriorityByModel).toEqual({ '*': 3 });
    expect(state.retryBudget.maxRetryRatio).toBe(0.1);
    expect(state.downgrades).toEqual([
      { fromModel: 'llama-3.1-70b-instruct', toModel: 'llama-3.1-8b-instruct', fraction: 0.5 },
    ]);

    const bad = await post(server, { id: 'x', kind: 'teleport', action: {} });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toContain(
      'scale, shift_traffic, circuit_break, shed_load, retry_budget, downgrade_model',
    );
    const unknownPool = await post(server, action('x2', 'scale', { pool: 'nope' }, { to: 3 }));
    expect(unknownPool.status).toBe(400);
  });

  it('runs beside a paced simulation and reports the actions it applied', async () => {
    let applied: unknown = null;
    const summary = await runSimulation({
      workload: 'burstgpt-1',
      durationMs: 60_000,
      drainMs: 30_000,
      speed: 30,
      actuatorPort: 0,
      onActuatorListening: (url) => {
        applied = fetch(`${url}/actions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(action('p1', 'scale', { pool: 'llama8b-h100-east' }, { from: 3, to: 4 })),
        }).then((r) => r.json());
      },
    });
    expect(await applied).toMatchObject({ status: 'applied' });
    expect(summary.actions).toBe(1);
    expect(summary.pools.find((p) => p.pool === 'llama8b-h100-east')!.replicasMax).toBe(4);
  });
});
