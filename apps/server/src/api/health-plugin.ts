import type { FastifyInstance } from 'fastify';
import type { TelemetryStore } from '@governor/store';
import { z } from 'zod';
import { useZodSchemas } from './zod-validation.ts';

export interface HealthOptions {
  store: TelemetryStore;
  maxQueuedRows: number;
  startedAt: number;
  isShuttingDown: () => boolean;
}

export async function healthPlugin(app: FastifyInstance, options: HealthOptions): Promise<void> {
  useZodSchemas(app);
  app.get(
    '/api/health',
    {
      schema: {
        summary: 'Liveness: the process answers',
        tags: ['system'],
        response: { 200: z.object({ status: z.literal('ok'), uptimeS: z.number() }) },
      },
    },
    async () => ({
      status: 'ok',
      uptimeS: Math.round((Date.now() - options.startedAt) / 1000),
    }),
  );

  app.get(
    '/api/ready',
    {
      schema: {
        summary: 'Readiness: the store answers and the write queue has room',
        tags: ['system'],
        response: {
          200: z.object({ ready: z.literal(true), queuedRows: z.number() }),
          503: z
            .object({ ready: z.literal(false), reasons: z.array(z.string()), queuedRows: z.number() })
            .describe('Not ready: shutting down or the write queue is full'),
        },
      },
    },
    async (_request, reply) => {
      const stats = options.store.writer.stats();
      const reasons: string[] = [];
      if (options.isShuttingDown()) reasons.push('shutting down');
      if (stats.queuedRows >= options.maxQueuedRows) reasons.push('write queue full');
      if (reasons.length > 0)
        return reply.code(503).send({ ready: false as const, reasons, queuedRows: stats.queuedRows });
      await options.store.ping();
      return { ready: true as const, queuedRows: stats.queuedRows };
    },
  );
}
