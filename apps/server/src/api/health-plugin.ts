import type { FastifyInstance } from 'fastify';
import type { Store } from '@governor/store';

export interface HealthOptions {
  store: Store;
  maxQueuedRows: number;
  startedAt: number;
  isShuttingDown: () => boolean;
}

export async function healthPlugin(app: FastifyInstance, options: HealthOptions): Promise<void> {
  app.get('/api/health', async () => ({
    status: 'ok',
    uptimeS: Math.round((Date.now() - options.startedAt) / 1000),
  }));

  app.get('/api/ready', async (_request, reply) => {
    const stats = options.store.writer.stats();
    const reasons: string[] = [];
    if (options.isShuttingDown()) reasons.push('shutting down');
    if (stats.queuedRows >= options.maxQueuedRows) reasons.push('write queue full');
    if (reasons.length > 0)
      return reply.code(503).send({ ready: false, reasons, queuedRows: stats.queuedRows });
    await options.store.query('SELECT 1');
    return { ready: true, queuedRows: stats.queuedRows };
  });
}
