import { RECOMMENDATION_STATES, type RecommendationState } from '@governor/conventions';
import { type ControlEngine, type ControlFailure, isoToNs } from '@governor/control';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { GovernorError } from '../errors.ts';
import { PolicyJson, policyFromJson, policyToJson } from './policy-json.ts';

// The control loop's API (docs/api.md): one tick on demand, the recommendation lifecycle for
// humans, the audit log and the auto-apply policies.

export interface ControlPluginOptions {
  engine: ControlEngine;
}

const EvaluateBody = z
  .object({ at: z.string().optional(), dryRun: z.boolean().optional() })
  .strict()
  .nullish();

const DecisionBody = z
  .object({ by: z.string().min(1).max(200).optional(), note: z.string().max(2000).optional() })
  .strict()
  .nullish();

const PoliciesBody = z.object({ policies: z.array(PolicyJson) }).strict();

function fail(failure: ControlFailure): never {
  switch (failure.code) {
    case 'not_found':
      throw new GovernorError('GOV_ERR_NOT_FOUND', failure.message);
    case 'invalid_transition':
      throw new GovernorError('GOV_ERR_CONTROL_INVALID_TRANSITION', failure.message);
    case 'disabled':
      throw new GovernorError('GOV_ERR_CONTROL_DISABLED', failure.message);
    case 'time_reversed':
      throw new GovernorError('GOV_ERR_CONTROL_TIME_REVERSED', failure.message);
  }
}

/** Who decided: the authenticated token's name; with auth off, the `by` the client sent. */
function actorOf(request: FastifyRequest, by: string | undefined): string {
  return request.principal?.name ?? by ?? 'anonymous';
}

function parseLimit(value: unknown, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) {
    throw new GovernorError('GOV_ERR_REQUEST_INVALID', `limit must be an integer between 1 and ${max}`);
  }
  return n;
}

export async function controlPlugin(app: FastifyInstance, options: ControlPluginOptions): Promise<void> {
  const { engine } = options;

  app.post('/api/control/evaluate', async (request) => {
    const parsed = EvaluateBody.safeParse(request.body);
    if (!parsed.success) {
      throw new GovernorError(
        'GOV_ERR_REQUEST_INVALID',
        'send JSON {"at": "<RFC 3339 time>", "dryRun": false}; both optional',
      );
    }
    let atNs: bigint | undefined;
    if (parsed.data?.at !== undefined) {
      const ns = isoToNs(parsed.data.at);
      if (ns === null) {
        throw new GovernorError(
          'GOV_ERR_REQUEST_INVALID',
          `"at" must be an RFC 3339 time such as 2024-01-01T00:05:00Z, got "${parsed.data.at}"`,
        );
      }
      atNs = ns;
    }
    const result = await engine.evaluate({ atNs, dryRun: parsed.data?.dryRun === true });
    if (!result.ok) fail(result);
    return result.result;
  });

  app.get('/api/recommendations', async (request) => {
    const query = request.query as { state?: string; limit?: string };
    let states: RecommendationState[] | undefined;
    if (query.state) {
      states = query.state.split(',').map((s) => s.trim()) as RecommendationState[];
      const unknown = states.filter((s) => !(RECOMMENDATION_STATES as readonly string[]).includes(s));
      if (unknown.length > 0) {
        throw new GovernorError(
          'GOV_ERR_REQUEST_INVALID',
          `unknown state ${unknown.join(', ')}; use ${RECOMMENDATION_STATES.join(', ')}`,
        );
      }
    }
    return {
      recommendations: await engine.listRecommendations({
        states,
        limit: parseLimit(query.limit, 100, 1000),
      }),
    };
  });

  app.get('/api/recommendations/:id', async (request) => {
    const { id } = request.params as { id: string };
    const recommendation = await engine.getRecommendation(id);
    if (!recommendation) throw new GovernorError('GOV_ERR_NOT_FOUND', `no recommendation ${id}`);
    return { recommendation };
  });

  for (const verb of ['approve', 'reject', 'apply'] as const) {
    app.post(`/api/recommendations/:id/${verb}`, async (request) => {
      const { id } = request.params as { id: string };
      const parsed = DecisionBody.safeParse(request.body);
      if (!parsed.success) {
        throw new GovernorError(
          'GOV_ERR_REQUEST_INVALID',
          'send JSON {"by": "<who>", "note": "<why>"}; both optional',
        );
      }
      const actor = actorOf(request, parsed.data?.by);
      const result = await engine[verb](id, actor, parsed.data?.note);
      if (!result.ok) fail(result);
      const { ok: _ok, ...body } = result;
      return body;
    });
  }

  app.get('/api/actions', async (request) => {
    const query = request.query as { limit?: string; recommendationId?: string };
    return {
      actions: await engine.listAudit({
        recommendationId: query.recommendationId,
        limit: parseLimit(query.limit, 200, 5000),
      }),
    };
  });

  app.get('/api/policies', async () => {
    const view = engine.getPolicies();
    return { ...view, policies: view.policies.map(policyToJson) };
  });

  app.put('/api/policies', async (request) => {
    const parsed = PoliciesBody.safeParse(request.body);
    if (!parsed.success) {
      const issues = parsed.error.issues
        .map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`)
        .join('; ');
      throw new GovernorError('GOV_ERR_POLICY_INVALID', `invalid policies: ${issues}`);
    }
    const names = parsed.data.policies.map((p) => p.name);
    const duplicate = names.find((n, i) => names.indexOf(n) !== i);
    if (duplicate)
      throw new GovernorError('GOV_ERR_POLICY_INVALID', `policy name "${duplicate}" is used twice`);
    const view = await engine.setPolicies(
      parsed.data.policies.map(policyFromJson),
      actorOf(request, undefined),
    );
    return { ...view, policies: view.policies.map(policyToJson) };
  });
}
