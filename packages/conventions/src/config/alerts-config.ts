import { z } from 'zod';

// Alert rules and receivers (DESIGN.md §5). Owned by the alerting issue; extend here.

export const AlertRuleConfig = z
  .object({
    name: z.string().min(1),
    signal: z.string().min(1),
    by: z.array(z.string()).default([]),
    op: z.enum(['>', '>=', '<', '<=', '==', '!=']).default('>'),
    threshold: z.number(),
    for: z.string().default('0s'),
    window: z.string().optional(),
    severity: z.string().default('warning'),
    receivers: z.array(z.string()).default([]),
    annotations: z.record(z.string(), z.string()).default({}),
  })
  .strict();
export type AlertRuleConfig = z.infer<typeof AlertRuleConfig>;

export const AlertsConfig = z
  .object({
    rules: z.array(AlertRuleConfig).default([]),
    group_wait_s: z.number().min(0).default(30),
    repeat_interval_s: z
      .number()
      .positive()
      .default(4 * 3600),
  })
  .strict();
export type AlertsConfig = z.infer<typeof AlertsConfig>;

export const ReceiverConfig = z
  .object({
    name: z.string().min(1),
    type: z.enum(['webhook', 'slack', 'alertmanager']),
    url: z.string().url(),
    secret: z.string().optional(),
    secret_env: z.string().optional(),
    timeout_ms: z.number().int().positive().default(5000),
  })
  .strict();
export type ReceiverConfig = z.infer<typeof ReceiverConfig>;
