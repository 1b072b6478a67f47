import { HOLD_RULES, RECOMMENDATION_KINDS, RECOMMENDATION_STATES } from '@governor/conventions';
import type { ControlConfig } from '@governor/conventions';
import {
  type ControlEngine,
  type ControlFailure,
  gateCandidate,
  isoToNs,
  previousOf,
} from '@governor/control';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { AnyObject, ERROR_RESPONSES, openObject } from './http-schemas.ts';
import { govParse, withHint, withInvalidCode, useZodSchemas } from './zod-validation.ts';
import { GovernorError } from '../errors.ts';
import { PolicyJson, policyFromJson, policyToJson } from './policy-json.ts';
import { desiredReplicasPlugin } from './desired-replicas-plugin.ts';
import { ExpectedImpactBody } from './expected-impact-schema.ts';

// The control loop's API (docs/api.md): one tick on demand, the recommendation lifecycle for
// humans, the audit log and the auto-apply policies.

export interface ControlPluginOptions {
  engine: ControlEngine;
}

const EvaluateBody = withHint(
  z
    .object({
      at: z.string().optional().describe('RFC 3339 event time of the tick; default: the watermark'),
      dryRun: z.boolean().optional().describe('Propose without recording or applying anything'),
    })
    .strict()
    .nullish(),
  'send JSON {"at": "<RFC 3339 time>", "dryRun": false}; both optional',
);

const DecisionBody = withHint(
  z
    .object({
      by: z.string().min(1).max(200).optional().describe('Who decided (used when auth is off)'),
      note: z.string().max(2000).optional().describe('Why, for the audit log'),
    })
    .strict()
    .nullish(),
  'send JSON {"by": "<who>", "note": "<why>"}; both optional',
);

const PoliciesBody = withInvalidCode(
  z.object({ policies: z.array(PolicyJson) }).strict(),
  'GOV_ERR_POLICY_INVALID',
);

const Target = openObject({
  pool: z.string().optional(),
  model: z.string().optional(),
  region: z.string().optional(),
  tenant: z.string().optional(),
}).meta({ id: 'RecommendationTarget' });

const RecommendationBody = openObject({
  id: z.string(),
  kind: z.enum(RECOMMENDATION_KINDS),
  target: Target,
  action: z.record(z.string(), z.unknown()).describe('Kind-specific, e.g. {"from": 4, "to": 6} replicas'),
  reason: z.string().describe('One sentence an operator understands'),
  evidence: z.array(
    openObject({
      signal: z.string(),
      value: z.number().nullable(),
      threshold: z.number().nullable(),
      window: z.string(),
    }),
  ),
  expectedImpact: ExpectedImpactBody,
  confidence: z.number(),
  state: z.enum(RECOMMENDATION_STATES),
  policy: z.string().nullable(),
  createdAt: z.string().describe('RFC 3339 event time of the tick that proposed it'),
  updatedAt: z.string(),
  waits: z
    .string()
    .nullable()
    .optional()
    .describe(
      'Why no policy may auto-apply it whatever its confidence (a human decides, or it must persist for another tick); null when a policy may',
    ),
  hold: z
    .object({
      rule: z.enum(HOLD_RULES),
      why: z.string(),
    })
    .nullable()
    .optional()
    .describe('The guard holding it back at the last tick, if any; each hold is also audited as `held`'),
}).meta({ id: 'Recommendation' });

const ControlActionBody = openObject({
  id: z.string().describe('Idempotency key: applied at most once'),
  recommendationId: z.string(),
  type: z.enum(['apply', 'rollback']),
  kind: z.enum(RECOMMENDATION_KINDS),
  target: Target,
  action: z.record(z.string(), z.unknown()),
  at: z.string().describe('RFC 3339 event time at which the action takes effect'),
}).meta({ id: 'ControlAction' });

const PoliciesView = openObject({ policies: z.array(PolicyJson) }).meta({ id: 'Policies' });

const PolicyPreviewEntry = z
  .object({
    recommendationId: z.string(),
    kind: z.enum(RECOMMENDATION_KINDS),
    target: Target,
    confidence: z.number(),
    state: z.enum(RECOMMENDATION_STATES),
    policy: z.string().nullable().describe('The first policy whose match fits; null: none does'),
    decision: z
      .enum(['auto_apply', 'dry_run', 'propose'])
      .describe('What that policy would do with it (cooldown and hourly limit are checked at the tick)'),
    action: z.record(z.string(), z.unknown()).describe('The action after max_step'),
    note: z.string(),
  })
  .meta({ id: 'PolicyPreviewEntry' });

/** Open recommendations: the ones a policy could still auto-apply at the next tick. */
const OPEN_STATES = ['proposed', 'approved'] as const;

// The preview gates each open recommendation with no memory of earlier actions (see the entry's
// decision): cooldowns and hourly limits depend on what is applied by the time the tick runs, so
// the control config's cooldown fallback is never read here.
const PREVIEW_CONTROL = { cooldown_s: 0 } as ControlConfig;

const idParams = z.object({ id: z.string().describe('Recommendation id') });
const limitQuery = (fallback: number, max: number) =>
  z
    .string()
    .optional()
    .describe(`At most this many, 1–${max}; default ${fallback}`)
    .transform(govParse((value: string | undefined) => parseLimit(value, fallback, max)));

/** A follower's answer to a change: the leader is known within one control interval. */
const NOT_LEADER_RETRY_AFTER_S = 5;

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
    case 'time_ahead':
      throw new GovernorError('GOV_ERR_CONTROL_TIME_AHEAD', failure.message);
    case 'not_leader':
      throw new GovernorError('GOV_ERR_CONTROL_NOT_LEADER', failure.message, NOT_LEADER_RETRY_AFTER_S);
  }
}

/** Who decided: the authenticated token's name; with auth off, the `by` the client sent. */
function actorOf(request: FastifyRequest, by: string | undefined): string {
  return request.principal?.name ?? by ?? 'anonymous';
}

function parseLimit(value: string | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) {
    throw new GovernorError('GOV_ERR_REQUEST_INVALID', `limit must be an integer between 1 and ${max}`);
  }
  return n;
}

export async function controlPlugin(app: FastifyInstance, options: ControlPluginOptions): Promise<void> {
  useZodSchemas(app);
  const { engine } = options;
  const api = app.withTypeProvider<ZodTypeProvider>();
  await app.register(desiredReplicasPlugin, { engine });

  api.post(
    '/api/control/evaluate',
    {
      schema: {
        summary: 'Run one control tick at event time `at`',
        description:
          'Proposes recommendations from the signals at `at` (default: the watermark), applies what a policy allows, and returns the actions decided, for lockstep callers to carry out. A tick before the last one is refused unless dryRun.',
        tags: ['control'],
        body: EvaluateBody,
        response: {
          200: openObject({
            at: z.string(),
            recommendations: z.array(RecommendationBody),
            actions: z.array(ControlActionBody),
          }),
          ...ERROR_RESPONSES,
        },
      },
    },
    async (request) => {
      const body = request.body;
      let atNs: bigint | undefined;
      if (body?.at !== undefined) {
        const ns = isoToNs(body.at);
        if (ns === null) {
          throw new GovernorError(
            'GOV_ERR_REQUEST_INVALID',
            `"at" must be an RFC 3339 time such as 2024-01-01T00:05:00Z, got "${body.at}"`,
          );
        }
        atNs = ns;
      }
      const result = await engine.evaluate({ atNs, dryRun: body?.dryRun === true });
      if (!result.ok) fail(result);
      return result.result;
    },
  );

  api.get(
    '/api/recommendations',
    {
      schema: {
        summary: 'Recommendations, newest first',
        tags: ['control'],
        querystring: z.object({
          state: z
            .string()
            .optional()
            .describe(`Comma-separated states: ${RECOMMENDATION_STATES.join(', ')}`)
            .transform(
              govParse((text: string | undefined) => {
                if (!text) return undefined;
                const states = text.split(',').map((s) => s.trim());
                const unknown = states.filter(
                  (s) => !(RECOMMENDATION_STATES as readonly string[]).includes(s),
                );
                if (unknown.length > 0) {
                  throw new GovernorError(
                    'GOV_ERR_REQUEST_INVALID',
                    `unknown state ${unknown.join(', ')}; use ${RECOMMENDATION_STATES.join(', ')}`,
                  );
                }
                return states as (typeof RECOMMENDATION_STATES)[number][];
              }),
            ),
          limit: limitQuery(100, 1000),
        }),
        response: { 200: z.object({ recommendations: z.array(RecommendationBody) }), ...ERROR_RESPONSES },
      },
    },
    async (request) => ({
      recommendations: await engine.listRecommendations({
        states: request.query.state,
        limit: request.query.limit,
      }),
    }),
  );

  api.get(
    '/api/recommendations/:id',
    {
      schema: {
        summary: 'One recommendation',
        tags: ['control'],
        params: idParams,
        response: { 200: z.object({ recommendation: RecommendationBody }), ...ERROR_RESPONSES },
      },
    },
    async (request) => {
      const { id } = request.params;
      const recommendation = await engine.getRecommendation(id);
      if (!recommendation) throw new GovernorError('GOV_ERR_NOT_FOUND', `no recommendation ${id}`);
      return { recommendation };
    },
  );

  const verbSummary = {
    approve: 'Approve a proposed recommendation (proposed → approved)',
    reject: 'Reject a recommendation (proposed/approved → rejected)',
    apply: 'Apply a recommendation now (→ applied; verified or rolled back after control.verify_after_s)',
  } as const;
  for (const verb of ['approve', 'reject', 'apply'] as const) {
    api.post(
      `/api/recommendations/:id/${verb}`,
      {
        schema: {
          summary: verbSummary[verb],
          tags: ['control'],
          params: idParams,
          body: DecisionBody,
          response: {
            200: openObject({ recommendation: RecommendationBody }),
            ...ERROR_RESPONSES,
          },
        },
      },
      async (request) => {
        const { id } = request.params;
        const actor = actorOf(request, request.body?.by);
        const result = await engine[verb](id, actor, request.body?.note);
        if (!result.ok) fail(result);
        const { ok: _ok, ...body } = result;
        return body;
      },
    );
  }

  api.get(
    '/api/actions',
    {
      schema: {
        summary: 'The audit log: every decision and action, newest first',
        tags: ['control'],
        querystring: z.object({
          limit: limitQuery(200, 5000),
          recommendationId: z.string().optional().describe('Only entries of this recommendation'),
        }),
        response: { 200: z.object({ actions: z.array(AnyObject) }), ...ERROR_RESPONSES },
      },
    },
    async (request) => ({
      actions: await engine.listAudit({
        recommendationId: request.query.recommendationId,
        limit: request.query.limit,
      }),
    }),
  );

  api.get(
    '/api/policies',
    {
      schema: {
        summary: 'Auto-apply policies',
        tags: ['control'],
        response: { 200: PoliciesView, ...ERROR_RESPONSES },
      },
    },
    async () => {
      const view = engine.getPolicies();
      return { ...view, policies: view.policies.map(policyToJson) };
    },
  );

  api.put(
    '/api/policies',
    {
      schema: {
        summary: 'Replace the auto-apply policies',
        tags: ['control'],
        body: PoliciesBody,
        response: { 200: PoliciesView, ...ERROR_RESPONSES },
      },
    },
    async (request) => {
      const names = request.body.policies.map((p) => p.name);
      const duplicate = names.find((n, i) => names.indexOf(n) !== i);
      if (duplicate)
        throw new GovernorError('GOV_ERR_POLICY_INVALID', `policy name "${duplicate}" is used twice`);
      const view = await engine.setPolicies(
        request.body.policies.map(policyFromJson),
        actorOf(request, undefined),
      );
      return { ...view, policies: view.policies.map(policyToJson) };
    },
  );

  api.post(
    '/api/policies/preview',
    {
      schema: {
        summary: 'Which open recommendations these policies would auto-apply (nothing is changed)',
        description:
          'Gates every proposed or approved recommendation with the given policies by the same rule a control tick uses (first matching policy; auto_apply, min_confidence — a recommendation that waits is applied only at min_confidence 0 —, max_step, dry_run). Cooldowns and hourly limits depend on the actions applied by the time of the tick and are not previewed.',
        tags: ['control'],
        body: PoliciesBody,
        response: { 200: z.object({ recommendations: z.array(PolicyPreviewEntry) }), ...ERROR_RESPONSES },
      },
    },
    async (request) => {
      const policies = request.body.policies.map(policyFromJson);
      const open = await engine.listRecommendations({ states: [...OPEN_STATES], limit: 1000 });
      return {
        recommendations: open.map((r) => {
          const gate = gateCandidate({
            step: r,
            target: r.target,
            previous: previousOf(r),
            confidence: r.confidence,
            waits: r.waits ?? null,
            atNs: 0n,
            policies,
            control: PREVIEW_CONTROL,
            memory: undefined,
            autoApplied: new Map(),
          });
          return {
            recommendationId: r.id,
            kind: r.kind,
            target: r.target,
            confidence: r.confidence,
            state: r.state,
            policy: gate.policy,
            decision: gate.decision,
            action: gate.step.action,
            note: gate.note,
          };
        }),
      };
    },
  );
}
