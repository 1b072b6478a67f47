import { z } from 'zod';

// Control loop, policies and actuators (docs/config.md; the loop: packages/control/README.md). Owned by the control issue; extend here.

export const RECOMMENDATION_KINDS = [
  'scale',
  'shift_traffic',
  'circuit_break',
  'shed_load',
  'retry_budget',
  'downgrade_model',
] as const;
export type RecommendationKind = (typeof RECOMMENDATION_KINDS)[number];

export const ControlConfig = z
  .object({
    enabled: z
      .boolean()
      .default(true)
      .describe('Run the control loop; false leaves signals and alerts only.'),
    interval_s: z.number().positive().default(30).describe('Event-time seconds between control ticks.'),
    window: z
      .string()
      .default('5m')
      .describe(
        'Signal window each tick reads (a duration such as 5m). Rates are taken over the part of it the store holds telemetry for: a store started within it covers less.',
      ),
    cooldown_s: z
      .number()
      .min(0)
      .default(300)
      .describe(
        'No action opposite to the last one on the same (kind, target) within this many seconds (hysteresis); a rollback waits at least this long too.',
      ),
    verify_after_s: z
      .number()
      .positive()
      .default(300)
      .describe(
        "Seconds after an action is applied before it is verified: the scope's goodput, error rate and TTFT p95 before and after; harm the action could cause is rolled back.",
      ),
    recommendation_ttl_s: z
      .number()
      .positive()
      .default(900)
      .describe('A recommendation left proposed or approved this many seconds expires.'),
    tick: z
      .enum(['watermark', 'lockstep'])
      .default('watermark')
      .describe(
        'What drives ticks: watermark ticks on every interval boundary the watermark passes; lockstep ticks only on POST /api/control/evaluate (a simulator or replay drives time).',
      ),
    settle_timeout_s: z
      .number()
      .positive()
      .default(900)
      .describe('Longest wait for an action to take effect (cold starts) before the target is judged again.'),
    slo_attainment_target: z
      .number()
      .gt(0)
      .max(1)
      .default(0.95)
      .describe(
        "Share of a pool's requests that must meet the TTFT SLO (or as many as its prompts allow on idle replicas): the objective's constraint. Where the pool model can judge a pool, a scale-in is taken only when it says the smaller pool still reaches it at the load forecast until verification. 1 − this is the error budget: a pool failing that much more than its peers (for reasons other than load) is an incident, failures past it on a model start shedding and, with many retries, a retry budget.",
      ),
    target_utilization: z
      .number()
      .gt(0)
      .max(1)
      .default(0.7)
      .describe(
        'Utilization the scale policy sizes pools for (share of the learned per-replica capacity); a pool is scaled up once it passes halfway from this to 1 (0.85 at 0.7).',
      ),
  })
  .strict()
  .describe(
    'The control loop: signals → recommendations → policy gate → actuators → verification (packages/control/README.md).',
  );
export type ControlConfig = z.infer<typeof ControlConfig>;

export const PolicyConfig = z
  .object({
    name: z.string().min(1).describe('Policy name, recorded on every recommendation it decides.'),
    match: z
      .object({
        kind: z
          .array(z.enum(RECOMMENDATION_KINDS))
          .optional()
          .describe('Recommendation kinds this policy governs; unset, all.'),
        target: z
          .string()
          .optional()
          .describe(
            'Target pattern: comma-separated dim=glob terms or bare globs over any target value, all of which must match, e.g. pool=llama8b-*,model=*8b*; unset, all.',
          ),
      })
      .strict()
      .default({})
      .describe('Which recommendations this policy decides; empty matches every one.'),
    auto_apply: z
      .boolean()
      .default(false)
      .describe('Apply matching recommendations without a human, within the limits below.'),
    max_step: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        'Largest change one action may make: replicas for scale, weight or share points for shift_traffic and downgrade_model.',
      ),
    cooldown_s: z
      .number()
      .min(0)
      .optional()
      .describe("Auto-apply only when the target's last action is older than this many seconds."),
    max_actions_per_hour: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('Auto-apply at most this many actions per hour under this policy.'),
    min_confidence: z
      .number()
      .min(0)
      .max(1)
      .default(0)
      .describe(
        'Auto-apply only recommendations at least this confident: a probability that what the recommendation rests on holds (0.5: at least as likely as not). Above 0, a recommendation that waits (for a human, or to persist for another tick) is not auto-applied either; 0 applies everything.',
      ),
    dry_run: z.boolean().default(false).describe('Only record what would have been done; nothing is sent.'),
  })
  .strict()
  .describe(
    'The policy gate: the first policy whose match fits a recommendation decides whether it is applied automatically; with none, it waits for a human. PUT /api/policies replaces them at runtime.',
  );
export type PolicyConfig = z.infer<typeof PolicyConfig>;

export const ActuatorConfig = z
  .object({
    name: z.string().min(1).describe('Actuator name, shown in the audit log.'),
    type: z
      .enum(['webhook', 'simulator', 'kubernetes'])
      .describe(
        "webhook POSTs the ControlAction JSON to url; simulator POSTs it to {url}/actions (the simulator's actuator endpoint); kubernetes patches the scale subresource of each pool's workload (pools[].kubernetes) and the backend weights of traffic.httproute (docs/kubernetes.md).",
      ),
    url: z
      .string()
      .url()
      .optional()
      .describe('Where actions are delivered; required for webhook and simulator, unused by kubernetes.'),
    traffic: z
      .object({
        httproute: z
          .object({
            name: z.string().min(1).describe('HTTPRoute name.'),
            namespace: z.string().min(1).describe('HTTPRoute namespace.'),
          })
          .strict()
          .describe(
            "The Gateway API HTTPRoute whose backendRefs name the pools' Services; shift_traffic and circuit_break patch only their weights.",
          ),
      })
      .strict()
      .optional()
      .describe('kubernetes only: where traffic weights live. Unset, shift_traffic and circuit_break fail.'),
    secret: z
      .string()
      .optional()
      .describe(
        'Key of the HMAC-SHA256 signature on every delivery (X-Governor-Signature); prefer secret_env.',
      ),
    secret_env: z.string().optional().describe('Environment variable holding the secret.'),
    previous_secret_env: z
      .string()
      .optional()
      .describe(
        'While rotating the secret: environment variable holding the previous one. Deliveries then carry one v1 signature per secret, so receivers verify with either.',
      ),
    timeout_ms: z.number().int().positive().default(5000).describe('Timeout of one delivery attempt, in ms.'),
    max_attempts: z
      .number()
      .int()
      .positive()
      .default(5)
      .describe(
        'Attempts before a delivery is recorded as failed (408, 425, 429, 5xx, timeouts and network errors are retried).',
      ),
    backoff_ms: z
      .number()
      .int()
      .positive()
      .default(500)
      .describe(
        'First retry delay in ms; doubles per attempt (with jitter), capped at 30 s; Retry-After is honoured.',
      ),
  })
  .strict()
  .superRefine((actuator, ctx) => {
    if (actuator.type !== 'kubernetes' && !actuator.url)
      ctx.addIssue({
        code: 'custom',
        path: ['url'],
        message: `url is required for a ${actuator.type} actuator`,
      });
    if (actuator.type !== 'kubernetes' && actuator.traffic)
      ctx.addIssue({
        code: 'custom',
        path: ['traffic'],
        message: 'traffic applies to kubernetes actuators only',
      });
  })
  .describe(
    'Where applied actions and rollbacks are delivered, each with its own ordered queue (packages/control/README.md, Actuators).',
  );
export type ActuatorConfig = z.infer<typeof ActuatorConfig>;
