import type { StorageResponse } from '@governor/conventions';
import type { StorageStats, TelemetryStore } from '@governor/store';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { useZodSchemas } from './zod-validation.ts';
import { ERROR_RESPONSES, openObject } from './http-schemas.ts';
import type { RetentionScheduler } from '../retention/retention-scheduler.ts';

// GET /api/storage (read): disk usage per table, the export folder, retention settings and runs.
// POST /api/retention/run (admin): one retention run now; answers its report.

export interface StorageOptions {
  store: TelemetryStore;
  retention: RetentionScheduler;
  /** Stats are cached this long; collecting them scans every table's storage info. */
  cacheMs?: number;
}

const Storage = openObject({
  collectedAt: z.string().describe('RFC 3339 (wall clock)'),
  database: openObject({ fileBytes: z.number(), walBytes: z.number() }),
  tables: z.array(openObject({ table: z.string(), rows: z.number(), bytes: z.number() })),
  exports: z.array(openObject({ target: z.string(), files: z.number(), bytes: z.number() })),
  lastRetentionRuns: z.array(openObject({ target: z.string(), state: z.string() })),
  retention: openObject({
    enabled: z.boolean(),
    ttlHours: z.record(z.string(), z.number()).describe('Per target; 0 keeps rows forever'),
    nextRunAt: z.string().nullable(),
  }),
}).meta({ id: 'Storage' });

export async function storagePlugin(app: FastifyInstance, options: StorageOptions): Promise<void> {
  useZodSchemas(app);
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

  app.get(
    '/api/storage',
    {
      schema: {
        summary: 'Disk use per table, the export folder, retention settings and runs',
        tags: ['system'],
        response: { 200: Storage, ...ERROR_RESPONSES },
      },
    },
    async (): Promise<StorageResponse> => {
      const r = options.retention;
      return {
        ...(await stats()),
        retention: {
          enabled: r.enabled,
          ttlHours: Object.fromEntries(Object.entries(r.policy.ttlHours).map(([k, v]) => [k, v ?? 0])),
          nextRunAt: r.nextRunAt()?.toISOString() ?? null,
        },
      };
    },
  );

  app.post(
    '/api/retention/run',
    {
      schema: {
        summary: 'Run retention now (export past-TTL rows to Parquet, then delete them)',
        tags: ['system'],
        response: {
          200: z.looseObject({}).describe('The run report, one entry per retention target'),
          ...ERROR_RESPONSES,
        },
      },
    },
    async () => {
      const report = await options.retention.runNow();
      cached = null;
      return report;
    },
  );
}
