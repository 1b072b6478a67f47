import type { ControlEngine } from '@governor/control';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { GovernorError } from '../errors.ts';
import { ERROR_RESPONSES } from './http-schemas.ts';
import { useZodSchemas } from './zod-validation.ts';

// The replica count the control loop wants per pool, in the JSON shape KEDA's `metrics-api` scaler
// reads (it GETs a URL and takes the number at a GJSON `valueLocation`). The same figure is
// `governor_desired_replicas{pool}` on /metrics for KEDA's prometheus scaler or an HPA through
// prometheus-adapter (docs/kubernetes.md).

export interface DesiredReplicasPluginOptions {
  engine: ControlEngine;
}

const PoolDesiredReplicas = z
  .object({
    pool: z.string(),
    desiredReplicas: z
      .number()
      .int()
      .describe("The control loop's last scale decision for the pool, else the replicas it reports"),
  })
  .meta({ id: 'PoolDesiredReplicas' });

const DesiredReplicas = z
  .object({
    pools: z
      .record(z.string(), z.object({ desiredReplicas: z.number().int() }))
      .describe('By pool name; KEDA valueLocation: pools.<pool>.desiredReplicas'),
  })
  .meta({ id: 'DesiredReplicas' });

export async function desiredReplicasPlugin(
  app: FastifyInstance,
  options: DesiredReplicasPluginOptions,
): Promise<void> {
  useZodSchemas(app);
  const api = app.withTypeProvider<ZodTypeProvider>();
  const { engine } = options;

  api.get(
    '/api/desired-replicas',
    {
      schema: {
        summary: 'Replicas the control loop wants, by pool (for KEDA’s metrics-api scaler)',
        description:
          'Point a KEDA metrics-api trigger here with valueLocation `pools.<pool>.desiredReplicas` and targetValue "1", or use /api/desired-replicas/{pool} with valueLocation `desiredReplicas` when the pool name holds a dot.',
        tags: ['control'],
        response: { 200: DesiredReplicas, ...ERROR_RESPONSES },
      },
    },
    async () => {
      const desired = engine.desiredReplicas();
      const pools: Record<string, { desiredReplicas: number }> = {};
      for (const pool of Object.keys(desired).sort()) pools[pool] = { desiredReplicas: desired[pool]! };
      return { pools };
    },
  );

  api.get(
    '/api/desired-replicas/:pool',
    {
      schema: {
        summary: 'Replicas the control loop wants for one pool (KEDA valueLocation: desiredReplicas)',
        tags: ['control'],
        params: z.object({ pool: z.string().describe('Pool name as in the config') }),
        response: { 200: PoolDesiredReplicas, ...ERROR_RESPONSES },
      },
    },
    async (request) => {
      const { pool } = request.params;
      const desiredReplicas = engine.desiredReplicas()[pool];
      if (desiredReplicas === undefined) {
        throw new GovernorError(
          'GOV_ERR_NOT_FOUND',
          `no replica count for pool "${pool}" yet: it is not configured, or no tick has observed its replicas and no scale action was applied; GET /api/desired-replicas lists the pools known`,
        );
      }
      return { pool, desiredReplicas };
    },
  );
}
