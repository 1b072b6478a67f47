import type { GovernorConfig } from '@governor/conventions';
import { type Signals, TASK_STATUSES } from '@governor/signals';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { useZodSchemas } from './zod-validation.ts';
import { GovernorError } from '../errors.ts';
import {
  DimensionFilter,
  ERROR_RESPONSES,
  dimensionFilter,
  duration,
  limit,
  optionalEventTime,
} from './http-schemas.ts';
import { TaskList } from './signals-schemas.ts';

export interface TasksPluginOptions {
  signals: Signals;
  config: GovernorConfig;
}

/** GET /api/tasks: tasks that ended in a window, with their attempts, outcome and cost share. */
export async function tasksPlugin(app: FastifyInstance, options: TasksPluginOptions): Promise<void> {
  useZodSchemas(app);
  const { signals } = options;
  app.withTypeProvider<ZodTypeProvider>().get(
    '/api/tasks',
    {
      schema: {
        summary: 'Tasks that ended in a window, newest first',
        description: 'With their attempts, outcome and share of the fleet cost.',
        tags: ['traces'],
        querystring: z.strictObject({
          from: optionalEventTime('from', 'Tasks that ended after this time. Default: `to` − `window`.'),
          to: optionalEventTime('to', 'Tasks that ended up to this time. Default: the watermark.'),
          window: duration('window', '1h', 'Range length when `from` is not given.'),
          status: z
            .enum(TASK_STATUSES, { error: `status must be one of ${TASK_STATUSES.join(', ')}` })
            .optional(),
          limit: limit(50, 500),
          ...DimensionFilter,
        }),
        response: { 200: TaskList, ...ERROR_RESPONSES },
      },
    },
    async (request) => {
      const { from, to, window: windowMs, status, limit: max, ...filter } = request.query;
      if (from !== undefined && to !== undefined && from >= to) {
        throw new GovernorError('GOV_ERR_SIGNALS_BAD_TIME', '`from` must be before `to`');
      }
      const tasks = await signals.tasks({
        windowMs,
        limit: max,
        filter: dimensionFilter(filter),
        ...(from === undefined ? {} : { fromNs: from }),
        ...(to === undefined ? {} : { toNs: to }),
        ...(status === undefined ? {} : { status }),
      });
      return { tasks, limit: max, truncated: tasks.length === max };
    },
  );
}
