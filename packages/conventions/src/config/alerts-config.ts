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
  name: z
    .string()
    .regex(/^[a-zA-Z_][\w:.-]*$/, 'expected a rule name such as ttft-slo')
    .describe('Rule name; becomes the alertname label.'),
  severity: z.string().min(1).default('warning').describe('The severity label of its alerts.'),
  receivers: z
    .array(z.string().min(1))
    .default([])
    .describe('Names of the receivers notified (receivers[].name).'),
  labels: z
    .record(LabelName, z.string())
    .default({})
    .describe('Extra static labels on every alert of the rule (not part of the fingerprint).'),
  annotations: z
    .record(z.string(), z.string())
    .default({})
    .describe(
      'Annotations such as description or runbook; {{ $value }}, {{ $threshold }} and {{ $labels.NAME }} are filled in.',
    ),
};

export const THRESHOLD_OPS = ['>', '>=', '<', '<=', '==', '!='] as const;
export type ThresholdOp = (typeof THRESHOLD_OPS)[number];

/** A signal of GET /api/signals (e.g. `ttftMs.p95`) per group, against a fixed threshold. */
export const ThresholdAlertRuleConfig = z
  .object({
    type: z.literal('threshold').describe('threshold (may be left out).'),
    ...ruleCommon,
    signal: z
      .string()
      .min(1)
      .describe(
        'A numeric signal path of GET /api/signals, e.g. ttftMs.p95, errorRate, goodput, hops.queue.p95.',
      ),
    by: z
      .array(z.enum(GROUP_DIMENSIONS))
      .default([])
      .describe('Dimensions that split the rule into one alert per group; empty judges the whole fleet.'),
    op: z.enum(THRESHOLD_OPS).default('>').describe('How the signal is compared with threshold.'),
    threshold: z.number().describe('The value the signal is compared with, in its unit.'),
    for: Duration.default('0s').describe(
      'How long the condition must hold (event time) before the alert fires.',
    ),
    window: Duration.optional().describe('Signal window; unset, signals.default_window.'),
  })
  .strict()
  .describe('A signal of GET /api/signals per group, against a fixed threshold.');
export type ThresholdAlertRuleConfig = z.infer<typeof ThresholdAlertRuleConfig>;

export const BurnRateWindowConfig = z
  .object({
    long: Duration.describe('The long window (a duration).'),
    short: Duration.describe('The short window, which makes the alert resolve soon after the burn stops.'),
    burn_rate: z.number().positive().describe('Fires when the burn rate exceeds this over both windows.'),
    severity: z.string().min(1).optional().describe("Severity of this pair's alerts; unset, the rule's."),
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
    type: z.literal('slo_burn_rate').describe('slo_burn_rate.'),
    ...ruleCommon,
    severity: z.string().min(1).default('page').describe('The severity label of its alerts.'),
    signal: z
      .string()
      .min(1)
      .default('goodput')
      .describe('A ratio of good tasks (0–1); burn rate = (1 − value) ÷ (1 − objective).'),
    by: z
      .array(z.enum(GROUP_DIMENSIONS))
      .default([])
      .describe('Dimensions that split the rule into one alert per group; empty judges the whole fleet.'),
    objective: z.number().gt(0).lt(1).describe('SLO target, e.g. 0.99 = 99 % of tasks good.'),
    windows: z
      .array(BurnRateWindowConfig)
      .min(1)
      .default(DEFAULT_BURN_RATE_WINDOWS)
      .describe(
        'Long/short window pairs, each its own alert (labels long_window, short_window). The default pages on 2 % of a 30-day budget spent in 1 h or 5 % in 6 h (Google SRE workbook).',
      ),
    min_tasks: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe(
        'Groups with fewer tasks in the short window are not judged (avoids paging on 1 of 2 failing).',
      ),
    for: Duration.default('0s').describe(
      'How long the condition must hold (event time) before the alert fires.',
    ),
  })
  .strict()
  .describe('Error-budget burn of a good-ratio signal against an SLO objective, over multiple windows.');
export type BurnRateAlertRuleConfig = z.infer<typeof BurnRateAlertRuleConfig>;

export const ALERT_EVENT_SOURCES = ['recommendation', 'action'] as const;
export type AlertEventSource = (typeof ALERT_EVENT_SOURCES)[number];

/**
 * Recommendation or control-action events as an alert source. A matching event fires the alert of
 * its group; it resolves once no matching event arrived for `resolve_after` (event time).
 */
export const EventAlertRuleConfig = z
  .object({
    type: z.literal('event').describe('event.'),
    ...ruleCommon,
    source: z
      .enum(ALERT_EVENT_SOURCES)
      .describe(
        'recommendation: recommendation events (labels kind, state, policy, target); action: control actions (kind, type apply or rollback, target).',
      ),
    match: z
      .record(z.string(), z.union([z.string(), z.array(z.string()).min(1)]))
      .default({})
      .describe(
        'Event label → accepted value or values, e.g. {state: [proposed], kind: scale}; all must match.',
      ),
    by: z.array(LabelName).default([]).describe('Event labels that split alerts, e.g. [kind, pool].'),
    resolve_after: Duration.default('15m').describe(
      'The alert resolves when no matching event arrived for this long (event time).',
    ),
  })
  .strict()
  .describe('Recommendation or control-action events as an alert source.');
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
    initial_backoff_ms: z
      .number()
      .int()
      .positive()
      .default(1000)
      .describe('First retry delay in ms; doubles per attempt, with jitter, up to max_backoff_ms.'),
    max_backoff_ms: z.number().int().positive().default(60_000).describe('Longest retry delay, in ms.'),
    retry_horizon_s: z
      .number()
      .positive()
      .default(3600)
      .describe('A notification not delivered this many seconds after it was created becomes a dead letter.'),
    max_concurrent: z
      .number()
      .int()
      .positive()
      .default(8)
      .describe('Deliveries in flight at once, over all receivers.'),
    log_retention_h: z
      .number()
      .positive()
      .default(7 * 24)
      .describe(
        'Delivered and dead deliveries (and their attempts) are deleted from the log after this many hours.',
      ),
  })
  .strict()
  .describe('Retries and bookkeeping of notification delivery.');
export type AlertDeliveryConfig = z.infer<typeof AlertDeliveryConfig>;

export const AlertsConfig = z
  .object({
    rules: z
      .array(AlertRuleConfig)
      .default([])
      .describe('Alert rules; type is threshold (the default when left out), slo_burn_rate or event.'),
    evaluation_interval_s: z
      .number()
      .positive()
      .default(15)
      .describe(
        'Event-time seconds between evaluations; every one the watermark passes is evaluated, in order.',
      ),
    poll_interval_ms: z
      .number()
      .int()
      .positive()
      .default(2000)
      .describe('Wall-clock interval, in ms, at which the watermark is checked.'),
    group_by: z
      .array(LabelName)
      .default(['alertname'])
      .describe(
        'Labels that group alerts into one notification, as in Alertmanager routes; receivers may override.',
      ),
    group_wait_s: z
      .number()
      .min(0)
      .default(30)
      .describe('Seconds a new group waits for more alerts before its first notification.'),
    group_interval_s: z
      .number()
      .min(0)
      .default(300)
      .describe('Seconds before a group already notified is notified about alerts added to it.'),
    repeat_interval_s: z
      .number()
      .positive()
      .default(4 * 3600)
      .describe('Seconds before a group that is still firing is notified again.'),
    external_url: z
      .string()
      .url()
      .optional()
      .describe('Where the console is reachable; sent as externalURL and in generatorURL.'),
    delivery: AlertDeliveryConfig.default(AlertDeliveryConfig.parse({})),
  })
  .strict()
  .describe(
    'Alert rules, their evaluation in event time and notification grouping (packages/alerts/README.md).',
  );
export type AlertsConfig = z.infer<typeof AlertsConfig>;

export const RECEIVER_TYPES = ['webhook', 'slack', 'alertmanager'] as const;
export type ReceiverType = (typeof RECEIVER_TYPES)[number];

export const ReceiverConfig = z
  .object({
    name: z.string().min(1).describe('Receiver name, used in alerts.rules[].receivers.'),
    type: z
      .enum(RECEIVER_TYPES)
      .describe(
        'webhook: Alertmanager webhook payload (version 4), signed when a secret is set; slack: incoming-webhook {text}; alertmanager: the base URL of an Alertmanager (POST /api/v2/alerts).',
      ),
    url: z.string().url().describe('Where notifications are sent.'),
    secret: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Key of the HMAC-SHA256 signature on webhook requests (X-Governor-Signature); prefer secret_env.',
      ),
    secret_env: z
      .string()
      .min(1)
      .optional()
      .describe('Environment variable holding the secret (preferred to secret in a file).'),
    timeout_ms: z.number().int().positive().default(5000).describe('Timeout of one delivery attempt, in ms.'),
    headers: z
      .record(z.string(), z.string())
      .default({})
      .describe('Extra HTTP headers on every request, e.g. an Authorization header.'),
    send_resolved: z.boolean().default(true).describe('Also notify when alerts resolve.'),
    group_by: z.array(LabelName).optional().describe('Overrides alerts.group_by for this receiver.'),
    group_wait_s: z.number().min(0).optional().describe('Overrides alerts.group_wait_s for this receiver.'),
    group_interval_s: z
      .number()
      .min(0)
      .optional()
      .describe('Overrides alerts.group_interval_s for this receiver.'),
    repeat_interval_s: z
      .number()
      .positive()
      .optional()
      .describe('Overrides alerts.repeat_interval_s for this receiver.'),
    max_alerts: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe('Alerts per notification (0 = all); the rest are counted in truncatedAlerts.'),
  })
  .strict()
  .describe('Where alert notifications go (packages/alerts/README.md).');
export type ReceiverConfig = z.infer<typeof ReceiverConfig>;
