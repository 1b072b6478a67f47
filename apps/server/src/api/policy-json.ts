import { PolicyConfig, RECOMMENDATION_KINDS } from '@governor/conventions';
import { z } from 'zod';

// Policies are snake_case in the YAML config and camelCase in the REST API (docs/config.md, docs/api.md).

export const PolicyJson = z
  .object({
    name: z.string().min(1),
    match: z
      .object({ kind: z.array(z.enum(RECOMMENDATION_KINDS)).optional(), target: z.string().optional() })
      .strict()
      .default({}),
    autoApply: z.boolean().default(false),
    maxStep: z.number().int().positive().optional(),
    cooldownS: z.number().min(0).optional(),
    maxActionsPerHour: z.number().int().positive().optional(),
    minConfidence: z.number().min(0).max(1).default(0),
    dryRun: z.boolean().default(false),
  })
  .strict();
export type PolicyJson = z.infer<typeof PolicyJson>;

export function policyToJson(p: PolicyConfig): PolicyJson {
  return {
    name: p.name,
    match: p.match,
    autoApply: p.auto_apply,
    ...(p.max_step !== undefined ? { maxStep: p.max_step } : {}),
    ...(p.cooldown_s !== undefined ? { cooldownS: p.cooldown_s } : {}),
    ...(p.max_actions_per_hour !== undefined ? { maxActionsPerHour: p.max_actions_per_hour } : {}),
    minConfidence: p.min_confidence,
    dryRun: p.dry_run,
  };
}

export function policyFromJson(p: PolicyJson): PolicyConfig {
  return PolicyConfig.parse({
    name: p.name,
    match: p.match,
    auto_apply: p.autoApply,
    max_step: p.maxStep,
    cooldown_s: p.cooldownS,
    max_actions_per_hour: p.maxActionsPerHour,
    min_confidence: p.minConfidence,
    dry_run: p.dryRun,
  });
}
