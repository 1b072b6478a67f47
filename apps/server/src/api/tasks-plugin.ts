import type { GovernorConfig } from '@governor/conventions';
import { GROUP_DIMENSIONS } from '@governor/conventions';
import { type Signals, TASK_STATUSES, type TaskStatus } from '@governor/signals';
import type { FastifyInstance } from 'fastify';
import { GovernorError } from '../errors.ts';
import {
  parseDimensionFilter,
  parseLimit,
  parseOptionalTime,
  parseWindowMs,
  readQuery,
} from './signals-query.ts';

export interface TasksPluginOptions {
  signals: Signals;
  config: GovernorConfig;
}

const PARAMS = ['from', 'to', 'window', 'status', 'limit', ...GROUP_DIMENSIONS];

/** GET /api/tasks: tasks that ended in a window, with their attempts, outcome and cost share. */
export async function tasksPlugin(app: FastifyInstance, options: TasksPluginOptions): Promise<void> {
  const { signals } = options;
  app.get('/api/tasks', async (request) => {
    const q = readQuery(request.query, PARAMS);
    const fromNs = parseOptionalTime(q.from, 'from');
    const toNs = parseOptionalTime(q.to, 'to');
    if (fromNs !== undefined && toNs !== undefined && fromNs >= toNs) {
      throw new GovernorError('GOV_ERR_SIGNALS_BAD_TIME', '`from` must be before `to`');
    }
    const windowMs = parseWindowMs(q.window, 'window', '1h');
    if (q.status !== undefined && !(TASK_STATUSES as readonly string[]).includes(q.status)) {
      throw new GovernorError(
        'GOV_ERR_REQUEST_INVALID',
        `status must be one of ${TASK_STATUSES.join(', ')}, got "${q.status}"`,
      );
    }
    const limit = parseLimit(q.limit, 50, 500);
    const tasks = await signals.tasks({
      windowMs,
      limit,
      filter: parseDimensionFilter(q),
      ...(fromNs === undefined ? {} : { fromNs }),
      ...(toNs === undefined ? {} : { toNs }),
      ...(q.status === undefined ? {} : { status: q.status as TaskStatus }),
    });
    return { tasks, limit, truncated: tasks.length === limit };
  });
}
