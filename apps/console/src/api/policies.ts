import type { RecommendationKind, RecommendationState } from '@governor/conventions';
import { requestJson } from '../lib/api-client.ts';

// Auto-apply policies (docs/api.md): GET and PUT /api/policies, POST /api/policies/preview.
// The REST shape is camelCase; the YAML config spells the same fields in snake_case.

export interface Policy {
  name: string;
  match: { kind?: RecommendationKind[]; target?: string };
  autoApply: boolean;
  maxStep?: number;
  cooldownS?: number;
  maxActionsPerHour?: number;
  minConfidence: number;
  dryRun: boolean;
}

export interface PoliciesResponse {
  policies: Policy[];
  source: 'config' | 'api';
  updatedBy: string | null;
  updatedAt: string | null;
}

export type PreviewDecision = 'auto_apply' | 'dry_run' | 'propose';

export interface PolicyPreviewEntry {
  recommendationId: string;
  kind: RecommendationKind;
  target: Record<string, string | undefined>;
  confidence: number;
  state: RecommendationState;
  policy: string | null;
  decision: PreviewDecision;
  action: Record<string, unknown>;
  note: string;
}

export function fetchPolicies(signal?: AbortSignal): Promise<PoliciesResponse> {
  return requestJson<PoliciesResponse>('/api/policies', signal ? { signal } : {});
}

/**
 * Replaces every policy (the API has no per-policy routes): create, edit and delete all send the
 * whole list. Policies are sent as typed by the editor; the server validates them.
 */
export function savePolicies(policies: readonly unknown[]): Promise<PoliciesResponse> {
  return requestJson<PoliciesResponse>('/api/policies', { method: 'PUT', body: { policies } });
}

export async function previewPolicies(
  policies: readonly unknown[],
  signal?: AbortSignal,
): Promise<PolicyPreviewEntry[]> {
  const body = await requestJson<{ recommendations: PolicyPreviewEntry[] }>('/api/policies/preview', {
    method: 'POST',
    body: { policies },
    ...(signal ? { signal } : {}),
  });
  return body.recommendations;
}
