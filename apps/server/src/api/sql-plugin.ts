import type { FastifyInstance } from 'fastify';
import { type TelemetryStore, UserQueryError } from '@governor/store';
import { z } from 'zod';
import { GovernorError } from '../errors.ts';
import { ERROR_RESPONSES, openObject } from './http-schemas.ts';
import { withHint, useZodSchemas } from './zod-validation.ts';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';

const SqlRequest = withHint(
  z.object({
    sql: z
      .string()
      .max(100_000)
      .describe('Exactly one SELECT or EXPLAIN statement over the views of docs/sql.md'),
    limit: z.number().int().positive().max(100_000).optional().describe('Row cap; default 1000'),
  }),
  'send JSON {"sql": "SELECT …", "limit": 1000}',
);

const SqlResult = openObject({
  columns: z.array(z.object({ name: z.string(), type: z.string() })),
  rows: z.array(z.unknown()).describe('One array of values per row, in column order'),
  truncated: z.boolean().describe('True when the row cap cut the result'),
  elapsedMs: z.number(),
}).meta({ id: 'SqlResult' });

export interface SqlOptions {
  store: TelemetryStore;
  defaultLimit: number;
  timeoutMs: number;
}

export async function sqlPlugin(app: FastifyInstance, options: SqlOptions): Promise<void> {
  useZodSchemas(app);
  app.withTypeProvider<ZodTypeProvider>().post(
    '/api/sql',
    {
      schema: {
        summary: 'Run one read-only SQL query',
        description:
          'Exactly one SELECT or EXPLAIN; no file or network access; a timeout and a row cap. Views: spans, requests, tasks, metric_points (docs/sql.md).',
        tags: ['system'],
        body: SqlRequest,
        response: { 200: SqlResult, ...ERROR_RESPONSES },
      },
    },
    async (request) => {
      try {
        return await options.store.runUserQuery(request.body.sql, {
          limit: request.body.limit ?? options.defaultLimit,
          timeoutMs: options.timeoutMs,
        });
      } catch (error) {
        if (error instanceof UserQueryError) throw new GovernorError(error.code, error.message);
        throw error;
      }
    },
  );
}
