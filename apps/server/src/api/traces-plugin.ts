import type { Signals } from '@governor/signals';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { useZodSchemas } from './zod-validation.ts';
import { GovernorError } from '../errors.ts';
import { ERROR_RESPONSES, limit, nonNegative, optionalEventTime } from './http-schemas.ts';
import { TraceList, TraceWaterfall } from './signals-schemas.ts';

export interface TracesPluginOptions {
  signals: Signals;
}

const TRACE_ID = /^[0-9a-fA-F]{32}$/;

const optionalText = (description: string) => z.string().optional().describe(description);

const TraceSearchQuery = z.strictObject({
  from: optionalEventTime('from', 'Only requests that started after this time.'),
  to: optionalEventTime('to', 'Only requests that started before this time.'),
  pool: optionalText('Only requests served by this pool'),
  model: optionalText('Only requests for this model'),
  region: optionalText('Only requests served in this region'),
  gpu_type: optionalText('Only requests served on this GPU type'),
  tenant: optionalText('Only requests of this tenant'),
  priority: optionalText('Only requests of this priority'),
  workflow_type: optionalText('Only requests of tasks of this workflow type'),
  outcome: optionalText('Only requests with this outcome (ok, error, timeout, …)'),
  taskId: optionalText('Only the requests of this task'),
  minMs: nonNegative('minMs', 'Only requests at least this long (end-to-end, ms)'),
  maxMs: nonNegative('maxMs', 'Only requests at most this long (end-to-end, ms)'),
  limit: limit(50, 1000),
});

/** GET /api/traces (search, newest first) and GET /api/traces/:traceId (hop waterfall). */
export async function tracesPlugin(app: FastifyInstance, options: TracesPluginOptions): Promise<void> {
  useZodSchemas(app);
  const { signals } = options;
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get(
    '/api/traces',
    {
      schema: {
        summary: 'Search requests (traces), newest first',
        tags: ['traces'],
        querystring: TraceSearchQuery,
        response: { 200: TraceList, ...ERROR_RESPONSES },
      },
    },
    async (request) => {
      const q = request.query;
      if (q.from !== undefined && q.to !== undefined && q.from >= q.to) {
        throw new GovernorError('GOV_ERR_SIGNALS_BAD_TIME', '`from` must be before `to`');
      }
      const traces = await signals.traces({
        limit: q.limit,
        ...(q.from === undefined ? {} : { fromNs: q.from }),
        ...(q.to === undefined ? {} : { toNs: q.to }),
        ...(q.pool ? { pool: q.pool } : {}),
        ...(q.model ? { model: q.model } : {}),
        ...(q.region ? { region: q.region } : {}),
        ...(q.gpu_type ? { gpuType: q.gpu_type } : {}),
        ...(q.tenant ? { tenant: q.tenant } : {}),
        ...(q.priority ? { priority: q.priority } : {}),
        ...(q.workflow_type ? { workflowType: q.workflow_type } : {}),
        ...(q.outcome ? { outcome: q.outcome } : {}),
        ...(q.taskId ? { taskId: q.taskId } : {}),
        ...(q.minMs === undefined ? {} : { minMs: q.minMs }),
        ...(q.maxMs === undefined ? {} : { maxMs: q.maxMs }),
      });
      return { traces, limit: q.limit, truncated: traces.length === q.limit };
    },
  );

  api.get(
    '/api/traces/:traceId',
    {
      schema: {
        summary: "One trace's spans as a hop waterfall",
        tags: ['traces'],
        params: z.object({
          traceId: z
            .string()
            .regex(TRACE_ID, 'not a trace id; expected 32 hex characters')
            .describe('32 hex characters'),
        }),
        response: { 200: TraceWaterfall, ...ERROR_RESPONSES },
      },
    },
    async (request) => {
      const { traceId } = request.params;
      const waterfall = await signals.trace(traceId);
      if (!waterfall)
        throw new GovernorError('GOV_ERR_TRACE_NOT_FOUND', `no spans with trace id ${traceId.toLowerCase()}`);
      return waterfall;
    },
  );
}
