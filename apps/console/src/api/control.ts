import type { Recommendation, RecommendationState } from '@governor/conventions';
import { buildPath, requestJson } from '../lib/api-client.ts';

export type { Recommendation, RecommendationState };

// Recommendations inbox and audit log (docs/api.md): GET /api/recommendations?state=,
// POST /api/recommendations/:id/{approve,reject,apply}, GET /api/actions.

export async function fetchRecommendations(
  state: string | null,
  signal?: AbortSignal,
): Promise<Recommendation[]> {
  const raw = await requestJson<unknown>(
    buildPath('/api/recommendations', { state }),
    signal ? { signal } : {},
  );
  const body = (raw ?? {}) as Record<string, unknown>;
  const list = Array.isArray(raw)
    ? raw
    : Array.isArray(body.recommendations)
      ? body.recommendations
      : Array.isArray(body.items)
        ? body.items
        : [];
  return list as Recommendation[];
}

export type RecommendationDecision = 'approve' | 'reject' | 'apply';

export async function decideRecommendation(
  id: string,
  decision: RecommendationDecision,
  note?: string,
): Promise<Recommendation | null> {
  // `by` names the decider when auth is off; with auth on, the server uses the token's name.
  const raw = await requestJson<unknown>(`/api/recommendations/${encodeURIComponent(id)}/${decision}`, {
    method: 'POST',
    body: note ? { by: 'console', note } : { by: 'console' },
  });
  const body = (raw ?? {}) as Record<string, unknown>;
  const rec = (body.recommendation ?? body) as Recommendation;
  return typeof rec?.id === 'string' ? rec : null;
}

/** One audit entry: a decision (approve/reject/apply/auto-apply), a verification or a rollback. */
export interface AuditEntry {
  id: string;
  atMs: number | null;
  type: string;
  recommendationId: string | null;
  kind: string | null;
  target: Record<string, string>;
  action: Record<string, unknown> | null;
  actor: string | null;
  result: string | null;
  detail: string | null;
}

export async function fetchActions(signal?: AbortSignal): Promise<AuditEntry[]> {
  const raw = await requestJson<unknown>('/api/actions?limit=200', signal ? { signal } : {});
  const body = (raw ?? {}) as Record<string, unknown>;
  const list = (
    Array.isArray(raw)
      ? raw
      : Array.isArray(body.actions)
        ? body.actions
        : Array.isArray(body.items)
          ? body.items
          : []
  ) as Record<string, unknown>[];
  return list.map(normalizeAuditEntry).sort((a, b) => (b.atMs ?? 0) - (a.atMs ?? 0));
}

function str(v: unknown): string | null {
  return v === null || v === undefined || v === '' ? null : String(v);
}

/** GET /api/actions entries: {id, at, decision, actor, reason, result, kind, target, details}. */
export function normalizeAuditEntry(raw: Record<string, unknown>): AuditEntry {
  const at = raw.at ?? raw.recordedAt;
  const atMs = typeof at === 'string' ? Date.parse(at) : typeof at === 'number' ? at : Number.NaN;
  const details = (raw.details ?? {}) as Record<string, unknown>;
  const action = (raw.action ?? details.action ?? null) as Record<string, unknown> | null;
  return {
    id: String(raw.id ?? `${raw.recommendationId}-${at}`),
    atMs: Number.isFinite(atMs) ? atMs : null,
    type: String(raw.decision ?? raw.type ?? 'action'),
    recommendationId: str(raw.recommendationId),
    kind: str(raw.kind),
    target: (raw.target ?? {}) as Record<string, string>,
    action: action && typeof action === 'object' ? action : null,
    actor: str(raw.actor),
    result: str(raw.result),
    detail: str(raw.reason),
  };
}

/** "scale 4 → 6 replicas" and friends: one line an operator reads without opening JSON. */
export function describeAction(kind: string | null, action: object | null): string {
  if (!action) return kind ?? 'action';
  const a = action as Record<string, unknown>;
  switch (kind) {
    case 'scale':
      return `scale ${a.from ?? '?'} → ${a.to ?? '?'} replicas`;
    case 'shift_traffic': {
      const weights = (a.weights ?? {}) as Record<string, number>;
      return `shift traffic: ${Object.entries(weights)
        .map(([pool, w]) => `${pool} ${Math.round(w * 100)}%`)
        .join(', ')}`;
    }
    case 'circuit_break':
      return a.open
        ? `open circuit breaker${a.durationS ? ` for ${a.durationS} s` : ''}`
        : 'close circuit breaker';
    case 'shed_load':
      return a.minPriority === null || a.minPriority === undefined
        ? 'stop shedding load'
        : `shed new tasks below priority ${a.minPriority}`;
    case 'retry_budget':
      return a.maxRetryRatio === null || a.maxRetryRatio === undefined
        ? 'lift the retry budget'
        : `limit retries to ${Math.round(Number(a.maxRetryRatio) * 100)}% of first attempts`;
    case 'downgrade_model':
      return `move ${Math.round(Number(a.fraction ?? 0) * 100)}% of new tasks from ${a.fromModel} to ${a.toModel}`;
    default:
      return `${kind ?? 'action'} ${JSON.stringify(action)}`;
  }
}

export function describeTarget(target: Record<string, string | undefined> | undefined): string {
  if (!target) return '';
  return Object.entries(target)
    .filter(([, v]) => v)
    .map(([k, v]) => `${k} ${v}`)
    .join(' · ');
}
