import type { StorageResponse } from '@governor/conventions';
import type { StorageStats, Store } from '@governor/store';
import type { FastifyInstance } from 'fastify';
import type { RetentionScheduler } from '../retention/retention-scheduler.ts';

// GET /api/storage (read): disk usage per table, the export folder, retention settings and runs.
// POST /api/retention/run (admin): one retention run now; answers its report.

export interface StorageOptions {
  store: Store;
  retention: RetentionScheduler;
  /** Stats are cached this long; collecting them scans every table's storage info. */
  cacheMs?: number;
}

export async function storagePlugin(app: FastifyInstance, options: StorageOptions): Promise<void> {
  const cacheMs = options.cacheMs ?? 10_000;
  let cached: { at: number; stats: Promise<StorageStats> } | null = null;
  const stats = () => {
    if (!cached || Date.now() - cached.at > cacheMs) {
      const pending = options.store.storageStats();
      cached = { at: Date.now(), stats: pending };
      pending.catch(() => {
        cached = null;
      });
    }
    return cached.stats;
  };

  app.get('/api/storage', async (): Promise<StorageResponse> => {
    const r = options.retention;
    return {
      ...(await stats()),
      retention: {
        enabled: r.enabled,
        ttlHours: Object.fromEntries(Object.entries(r.policy.ttlHours).map(([k, v]) => [k, v ?? 0])),
        nextRunAt: r.nextRunAt()?.toISOString() ?? null,
      },
    };
  });

  app.post('/api/retention/run', async () => {
    const report = await options.retention.runNow();
    cached = null;
    return report;
  });
}
