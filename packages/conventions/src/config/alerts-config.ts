import { z } from 'zod';
import { GROUP_DIMENSIONS } from '../api/signals.ts';
import { parseDurationMs } from '../duration.ts';

// Alert rules and receivers (docs/config.md). Owned by the alerting issue; packages/alerts/README.md
// explains each field with examples.

const Duration = z.string().refine(
  (text) => {
    try {
      parseDurationMs(text);
      return true;
    } catch {
      return false;
    }
  },
  { message: 'expected a duration such as 30s, 5m or 1h30m' },
);

const LabelName = z
  .string()
  .regex(
    /^[a-zA-Z_][a-zA-Z0-9_]*$/,
    'expected a label name: letters, digits and _, not starting with a digit',
  );

const ruleCommon = {
  /** Becomes the `alertname` label. */
  name: z.string().regex(/^[a-zA-Z_][\w:.-]*$/, 'expected a rule name such as ttft-slo'),
  severity: z.string().min(1).default('warning'),
  receivers: z.array(z.string().min(1)).default([]),
  /** Extra static labels on every alert of the rule (not part of the fingerprint). */
  labels: z.record(LabelName, z.string()).default({}),
  /** `{{ $value }}`, `{{ $threshold }}` and `{{ $labels.pool }}` are filled in. */
  annotations: z.record(z.string(), z.string()).default({}),
};

export const THRESHOLD_OPS = ['>', '>=', '<', '<=', '==', '!='] as const;
export type ThresholdOp = (typeof THRESHOLD_OPS)[number];

/** A signal of GET /api/signals (e.g. `ttftMs.p95`) per group, against a fixed threshold. */
export const ThresholdAlertRuleConfig = z
  .object({
    type: z.literal('threshold'),
    ...ruleCommon,
    signal: z.string().min(1),
    by: z.array(z.enum(GROUP_DIMENSIONS)).default([]),
    op: z.enum(THRESHOLD_OPS).default('>'),
    threshold: z.number(),
    /** How long the condition must hold (event time) before the alert fires. */
    for: Duration.default('0s'),
    /** Signal window; default `signals.default_window`. */
    window: Duration.optional(),
  })
  .strict();
export type ThresholdAlertRuleConfig = z.infer<typeof ThresholdAlertRuleConfig>;

export const BurnRateWindowConfig = z
  .object({
    long: Duration,
    short: Duration,
    /** Fires when the burn rate exceeds this over both windows. */
    burn_rate: z.number().positive(),
    /** Default: the rule's severity. */
    severity: z.string().min(1).optional(),
  })
  .strict();
export type BurnRateWindowConfig = z.infer<typeof BurnRateWindowConfig>;

/** Google SRE workbook, "multiwindow, multi-burn-rate alerts": 2% of a 30-day budget in 1h, 5% in 6h. */
export const DEFAULT_BURN_RATE_WINDOWS: BurnRateWindowConfig[] = [
  { long: '1h', short: '5m', burn_rate: 14.4 },
  { long: '6h', short: '30m', burn_rate: 6 },
];

/** Error-budget burn of a good-ratio signal (goodput by default) against an SLO objective. */
export const BurnRateAlertRuleConfig = z
  .object({
    type: z.literal('slo_burn_rate'),
    ...ruleCommon,
    severity: z.string().min(1).default('page'),
    /** A ratio of good tasks (0–1); burn rate = (1 − value) ÷ (1 − objective). */
    signal: z.string().min(1).default('goodput'),
    by: z.array(z.enum(GROUP_DIMENSIONS)).default([]),
    /** SLO target, e.g. 0.99 = 99% of tasks good. */
    objective: z.number().gt(0).lt(1),
    windows: z.array(BurnRateWindowConfig).min(1).default(DEFAULT_BURN_RATE_WINDOWS),
    /** Groups with fewer tasks in the short window are not judged (avoids paging on 1 of 2 failing). */
    min_tasks: z.number().int().min(0).default(0),
    for: Duration.default('0s'),
  })
  .strict();
export type BurnRateAlertRuleConfig = z.infer<typeof BurnRateAlertRuleConfig>;

export const ALERT_EVENT_SOURCES = ['recommendation', 'action'] as const;
export type AlertEventSource = (typeof ALERT_EVENT_SOURCES)[number];

/**
 * Recommendation or control-action events as an alert source. A matching event fires the alert of
 * its group; it resolves once no matching event arrived for `resolve_after` (event time).
 */
export const EventAlertRuleConfig = z
  .object({
    type: z.literal('event'),
    ...ruleCommon,
    source: z.enum(ALERT_EVENT_SOURCES),
    /** Event label → accepted value(s), e.g. `{state: [proposed], kind: scale}`; all must match. */
    match: z.record(z.string(), z.union([z.string(), z.array(z.string()).min(1)])).default({}),
    /** Event labels that split alerts, e.g. `[kind, pool]`. */
    by: z.array(LabelName).default([]),
    resolve_after: Duration.default('15m'),
  })
  .strict();
export type EventAlertRuleConfig = z.infer<typeof EventAlertRuleConfig>;

export const AlertRuleConfig = z.preprocess(
  // `type` may be left out for the common case, a threshold rule.
  (raw) =>
    raw && typeof raw === 'object' && !Array.isArray(raw) && !('type' in raw)
      ? { type: 'threshold', ...raw }
      : raw,
  z.discriminatedUnion('type', [ThresholdAlertRuleConfig, BurnRateAlertRuleConfig, EventAlertRuleConfig]),
);
export type AlertRuleConfig = z.infer<typeof AlertRuleConfig>;

export const AlertDeliveryConfig = z
  .object({
    /** First retry delay; doubles per attempt, with jitter, up to max_backoff_ms. */
    initial_backoff_ms: z.number().int().positive().default(1000),
    max_backoff_ms: z.number().int().positive().default(60_000),
    /** A notification not delivered this long after it was created becomes a dead letter. */
    retry_horizon_s: z.number().positive().default(3600),
    /** Deliveries in flight at once, over all receivers. */
    max_concurrent: z.number().int().positive().default(8),
    /** Delivered and dead deliveries (and their attempts) are deleted from the log after this. */
    log_retention_h: z
      .number()
      .positive()
      .default(7 * 24),
  })
  .strict();
export type AlertDeliveryConfig = z.infer<typeof AlertDeliveryConfig>;

export const AlertsConfig = z
  .object({
    rules: z.array(AlertRuleConfig).default([]),
    /** Event time between evaluations; each one that the watermark passes is evaluated. */
    evaluation_interval_s: z.number().positive().default(15),
    /** Wall-clock interval at which the watermark is checked. */
    poll_interval_ms: z.number().int().positive().default(2000),
    /** Notification grouping, as in Alertmanager routes; receivers may override each. */
    group_by: z.array(LabelName).default(['alertname']),
    group_wait_s: z.number().min(0).default(30),
    group_interval_s: z.number().min(0).default(300),
    repeat_interval_s: z
      .number()
      .positive()
      .default(4 * 3600),
    /** Where the console is reachable; sent as `externalURL` and in `generatorURL`. */
    external_url: z.string().url().optional(),
    delivery: AlertDeliveryConfig.default(AlertDeliveryConfig.parse({})),
  })
  .strict();
export type AlertsConfig = z.infer<typeof AlertsConfig>;

export const RECEIVER_TYPES = ['webhook', 'slack', 'alertmanager'] as const;
export type ReceiverType = (typeof RECEIVER_TYPES)[number];

export const ReceiverConfig = z
  .object({
    name: z.string().min(1),
    /**
     * webhook: Alertmanager webhook payload (version 4), signed when a secret is set;
     * slack: incoming-webhook `{text}`; alertmanager: the base URL of an Alertmanager (POST /api/v2/alerts).
     */
    type: z.enum(RECEIVER_TYPES),
    url: z.string().url(),
    secret: z.string().min(1).optional(),
    /** Environment variable holding the secret (preferred to `secret` in a file). */
    secret_env: z.string().min(1).optional(),
    timeout_ms: z.number().int().positive().default(5000),
    headers: z.record(z.string(), z.string()).default({}),
    send_resolved: z.boolean().default(true),
    group_by: z.array(LabelName).optional(),
    group_wait_s: z.number().min(0).optional(),
    group_interval_s: z.number().min(0).optional(),
    repeat_interval_s: z.number().positive().optional(),
    /** Alerts per notification (0 = all); the rest are counted in `truncatedAlerts`. */
    max_alerts: z.number().int().min(0).default(0),
  })
  .strict();
export type ReceiverConfig = z.infer<typeof ReceiverConfig>;
