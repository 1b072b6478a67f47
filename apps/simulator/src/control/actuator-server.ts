import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { formatSimTime } from '../engine/sim-time.ts';
import type { Simulation } from '../sim/simulation.ts';
import { parseControlAction } from './apply-control-action.ts';
import type { ActionApplier } from './apply-control-action.ts';
import { describeFleetState } from './describe-fleet-state.ts';

export interface ActuatorServer {
  url: string;
  close(): Promise<void>;
}

/**
 * The simulator's actuator: POST /actions takes a ControlAction and applies it at the current
 * simulated time (idempotent by id); GET /state reports the fleet.
 */
export function buildActuatorApp(sim: Simulation, applier: ActionApplier): FastifyInstance {
  const app = Fastify({ logger: false });
  app.post(
    '/actions',
    {
      schema: {
        body: {
          type: 'object',
          required: ['id', 'kind', 'action'],
          properties: {
            id: { type: 'string' },
            kind: { type: 'string' },
            action: { type: 'object' },
            target: { type: 'object' },
          },
        },
      },
    },
    async (request, reply) => {
      const parsed = parseControlAction(request.body);
      if (!parsed.ok) return reply.code(400).send({ status: 'rejected', message: parsed.message });
      const result = applier.apply(parsed.action, 'actuator');
      const body = { ...result, appliedAt: formatSimTime(sim.startEpochMs, sim.nowMs) };
      return reply.code(result.status === 'rejected' ? 400 : 200).send(body);
    },
  );
  app.get('/state', async () => describeFleetState(sim));
  app.get('/health', async () => ({ status: 'ok' }));
  return app;
}

export async function startActuatorServer(
  sim: Simulation,
  applier: ActionApplier,
  options: { port: number; host?: string },
): Promise<ActuatorServer> {
  const app = buildActuatorApp(sim, applier);
  const host = options.host ?? '127.0.0.1';
  await app.listen({ port: options.port, host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  return { url: `http://${host}:${port}`, close: () => app.close() };
}
