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
    enabled: z.boolean().default(true),
    interval_s: z.number().positive().default(30),
    window: z.string().default('5m'),
    cooldown_s: z.number().min(0).default(300),
    verify_after_s: z.number().positive().default(300),
    recommendation_ttl_s: z.number().positive().default(900),
    /**
     * What drives ticks: `watermark` ticks on every interval boundary the watermark passes;
     * `lockstep` ticks only on POST /api/control/evaluate (a simulator or replay drives time).
     */
    tick: z.enum(['watermark', 'lockstep']).default('watermark'),
    /** Longest wait for an action to take effect (cold starts) before the target is judged again. */
    settle_timeout_s: z.number().positive().default(900),
    /** Utilization the scale policy sizes pools for (share of learned per-replica capacity). */
    target_utilization: z.number().gt(0).max(1).default(0.7),
  })
  .strict();
export type ControlConfig = z.infer<typeof ControlConfig>;

export const PolicyConfig = z
  .object({
    name: z.string().min(1),
    match: z
      .object({
        kind: z.array(z.enum(RECOMMENDATION_KINDS)).optional(),
        target: z.string().optional(),
      })
      .strict()
      .default({}),
    auto_apply: z.boolean().default(false),
    max_step: z.number().int().positive().optional(),
    cooldown_s: z.number().min(0).optional(),
    max_actions_per_hour: z.number().int().positive().optional(),
    min_confidence: z.number().min(0).max(1).default(0),
    dry_run: z.boolean().default(false),
  })
  .strict();
export type PolicyConfig = z.infer<typeof PolicyConfig>;

export const ActuatorConfig = z
  .object({
    name: z.string().min(1),
    type: z.enum(['webhook', 'simulator']),
    url: z.string().url(),
    secret: z.string().optional(),
    secret_env: z.string().optional(),
    timeout_ms: z.number().int().positive().default(5000),
    max_attempts: z.number().int().positive().default(5),
    /** First retry delay; doubles per attempt (with jitter), capped at 30 s. */
    backoff_ms: z.number().int().positive().default(500),
  })
  .strict();
export type ActuatorConfig = z.infer<typeof ActuatorConfig>;
