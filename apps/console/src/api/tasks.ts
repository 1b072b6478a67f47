import { buildPath, requestJson } from '../lib/api-client.ts';
import { anyTimeToMs } from '../lib/ns-to-ms.ts';
import { toIso } from '../lib/time-range.ts';

// GET /api/tasks (docs/api.md): one row per task (workflow, conversation or single trace).

export interface TaskRow {
  taskId: string;
  startMs: number | null;
  tenant: string | null;
  workflowType: string | null;
  outcome: string | null;
  succeeded: boolean | null;
  steps: number | null;
  attempts: number | null;
  retries: number | null;
  durationMs: number | null;
  costUsd: number | null;
  traceId: string | null;
}

export async function fetchTasks(
  params: {
    fromMs: number;
    toMs: number;
    tenant?: string | null;
    workflowType?: string | null;
    status?: string | null;
    limit?: number;
  },
  signal?: AbortSignal,
): Promise<{ tasks: TaskRow[]; truncated: boolean }> {
  const path = buildPath('/api/tasks', {
    from: toIso(params.fromMs),
    to: toIso(params.toMs),
    tenant: params.tenant,
    workflow_type: params.workflowType,
    status: params.status,
    limit: params.limit ?? 200,
  });
  const raw = await requestJson<unknown>(path, signal ? { signal } : {});
  const body = (raw ?? {}) as Record<string, unknown>;
  const list = (
    Array.isArray(raw)
      ? raw
      : Array.isArray(body.tasks)
        ? body.tasks
        : Array.isArray(body.items)
          ? body.items
          : []
  ) as Record<string, unknown>[];
  return { tasks: list.map(normalizeTask), truncated: Boolean(body.truncated) };
}

function num(v: unknown): number | null {
  if (v === null || v === undefined || v === '') return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

function str(v: unknown): string | null {
  return v === null || v === undefined || v === '' ? null : String(v);
}

const time = anyTimeToMs;

function lastAttemptTrace(attempts: unknown): string | null {
  if (!Array.isArray(attempts) || attempts.length === 0) return null;
  const last = attempts[attempts.length - 1] as { traceId?: unknown };
  return typeof last?.traceId === 'string' ? last.traceId : null;
}

/** GET /api/tasks rows: {taskId, tenant, workflowType, start, e2eMs, status, retries, steps, costUsd, attempts}. */
export function normalizeTask(raw: Record<string, unknown>): TaskRow {
  const outcome = str(raw.status ?? raw.outcome);
  const succeededRaw = raw.succeeded ?? raw.success ?? (outcome === 'pending' ? null : undefined);
  const attempts = num(raw.attempts ?? raw.attemptCount);
  const retries =
    num(raw.retries ?? raw.retryCount) ??
    (attempts !== null && num(raw.steps) !== null ? attempts - num(raw.steps)! : null);
  return {
    taskId: String(raw.taskId ?? raw.task_id ?? raw.id ?? ''),
    startMs: time(raw.startTime ?? raw.start ?? raw.startNs ?? raw.start_ns ?? raw.startMs),
    tenant: str(raw.tenant),
    workflowType: str(raw.workflowType ?? raw.workflow_type),
    outcome,
    succeeded:
      typeof succeededRaw === 'boolean' ? succeededRaw : outcome === null ? null : outcome === 'success',
    steps: num(raw.steps ?? raw.stepCount),
    attempts,
    retries,
    durationMs: num(raw.durationMs ?? raw.e2eMs ?? raw.duration_ms),
    costUsd: num(raw.costUsd ?? raw.cost_usd),
    traceId: str(raw.traceId ?? raw.firstTraceId ?? raw.trace_id ?? lastAttemptTrace(raw.attempts)),
  };
}
