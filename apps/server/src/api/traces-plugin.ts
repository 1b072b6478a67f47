import type { Signals } from '@governor/signals';
import type { FastifyInstance } from 'fastify';
import { GovernorError } from '../errors.ts';
import { parseLimit, parseNonNegativeNumber, parseOptionalTime, readQuery } from './signals-query.ts';

export interface TracesPluginOptions {
  signals: Signals;
}

const SEARCH_PARAMS = [
  'from',
  'to',
  'pool',
  'model',
  'region',
  'gpu_type',
  'tenant',
  'priority',
  'workflow_type',
  'outcome',
  'taskId',
  'minMs',
  'maxMs',
  'limit',
];
const TRACE_ID = /^[0-9a-fA-F]{32}$/;

/** GET /api/traces (search, newest first) and GET /api/traces/:traceId (hop waterfall). */
export async function tracesPlugin(app: FastifyInstance, options: TracesPluginOptions): Promise<void> {
  const { signals } = options;

  app.get('/api/traces', async (request) => {
    const q = readQuery(request.query, SEARCH_PARAMS);
    const fromNs = parseOptionalTime(q.from, 'from');
    const toNs = parseOptionalTime(q.to, 'to');
    if (fromNs !== undefined && toNs !== undefined && fromNs >= toNs) {
      throw new GovernorError('GOV_ERR_SIGNALS_BAD_TIME', '`from` must be before `to`');
    }
    const minMs = parseNonNegativeNumber(q.minMs, 'minMs');
    const maxMs = parseNonNegativeNumber(q.maxMs, 'maxMs');
    const limit = parseLimit(q.limit, 50, 1000);
    const traces = await signals.traces({
      limit,
      ...(fromNs === undefined ? {} : { fromNs }),
      ...(toNs === undefined ? {} : { toNs }),
      ...(q.pool ? { pool: q.pool } : {}),
      ...(q.model ? { model: q.model } : {}),
      ...(q.region ? { region: q.region } : {}),
      ...(q.gpu_type ? { gpuType: q.gpu_type } : {}),
      ...(q.tenant ? { tenant: q.tenant } : {}),
      ...(q.priority ? { priority: q.priority } : {}),
      ...(q.workflow_type ? { workflowType: q.workflow_type } : {}),
      ...(q.outcome ? { outcome: q.outcome } : {}),
      ...(q.taskId ? { taskId: q.taskId } : {}),
      ...(minMs === undefined ? {} : { minMs }),
      ...(maxMs === undefined ? {} : { maxMs }),
    });
    return { traces, limit, truncated: traces.length === limit };
  });

  app.get('/api/traces/:traceId', async (request) => {
    const { traceId } = request.params as { traceId: string };
    if (!TRACE_ID.test(traceId)) {
      throw new GovernorError(
        'GOV_ERR_REQUEST_INVALID',
        `"${traceId}" is not a trace id; expected 32 hex characters`,
      );
    }
    const waterfall = await signals.trace(traceId);
    if (!waterfall)
      throw new GovernorError('GOV_ERR_TRACE_NOT_FOUND', `no spans with trace id ${traceId.toLowerCase()}`);
    return waterfall;
  });
}
