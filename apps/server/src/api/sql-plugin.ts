import type { FastifyInstance } from 'fastify';
import { type Store, UserQueryError } from '@governor/store';
import { z } from 'zod';
import { GovernorError } from '../errors.ts';

const SqlRequest = z.object({
  sql: z.string().max(100_000),
  limit: z.number().int().positive().max(100_000).optional(),
});

export interface SqlOptions {
  store: Store;
  defaultLimit: number;
  timeoutMs: number;
}

export async function sqlPlugin(app: FastifyInstance, options: SqlOptions): Promise<void> {
  app.post('/api/sql', async (request) => {
    const parsed = SqlRequest.safeParse(request.body);
    if (!parsed.success) {
      throw new GovernorError('GOV_ERR_REQUEST_INVALID', 'send JSON {"sql": "SELECT …", "limit": 1000}');
    }
    try {
      return await options.store.runUserQuery(parsed.data.sql, {
        limit: parsed.data.limit ?? options.defaultLimit,
        timeoutMs: options.timeoutMs,
      });
    } catch (error) {
      if (error instanceof UserQueryError) throw new GovernorError(error.code, error.message);
      throw error;
    }
  });
}
