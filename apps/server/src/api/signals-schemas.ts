import { GROUP_DIMENSIONS, MAX_SIGNAL_GROUPS } from '@governor/conventions';
import { z } from 'zod';
import { openObject } from './http-schemas.ts';

// Response shapes of the read API: GET /api/signals, /api/signals/series, /api/traces and
// /api/tasks. Objects are loose: a field the signals package adds is passed through (and shows in
// the reference once it is named here) rather than silently dropped by serialization.

const nullableNumber = z.number().nullable();

export const Percentiles = openObject({ p50: nullableNumber, p95: nullableNumber, p99: nullableNumber })
  .describe('Milliseconds; null when the window holds no data (never 0)')
  .meta({ id: 'Percentiles' });

export const HopLatency = openObject({
  p50: nullableNumber,
  p95: nullableNumber,
  shareOfE2e: nullableNumber.optional().describe('Mean share of the e2e latency spent in this hop (0–1)'),
  shareOfTtft: nullableNumber.optional().describe('Mean share of TTFT spent in this hop (0–1)'),
}).meta({ id: 'HopLatency' });

export const SignalGroup = openObject({
  key: z
    .record(z.string(), z.union([z.string(), z.number(), z.null()]))
    .describe(`The group's values of the \`by\` dimensions (${GROUP_DIMENSIONS.join(', ')})`),
  requests: z.number().describe('Requests (trace roots) that ended in the window'),
  ttftMs: Percentiles.describe('Time to first token as the user saw it: root span start → first token'),
  serverTtftMs: Percentiles.describe('Time to first token measured inside the runtime'),
  e2eMs: Percentiles.describe('Root span duration'),
  errorRate: nullableNumber,
  overloadRate: nullableNumber.optional(),
  preemptionRate: nullableNumber.optional(),
  goodput: nullableNumber.describe('Share of tasks that succeeded within the SLO'),
  utilizationRatio: nullableNumber.describe(
    'memoryUtil ÷ computeUtil: > 1.2 memory-bound, < 0.8 compute-bound',
  ),
  memoryUtil: nullableNumber,
  computeUtil: nullableNumber,
  successPerDollar: nullableNumber.describe('Tasks within the SLO per USD of GPU time'),
  costPerSuccessfulTaskUsd: nullableNumber,
  costUsd: nullableNumber,
  tasks: z.number(),
  successfulTasks: z.number(),
  retryRatio: nullableNumber,
  queueMs: Percentiles,
  queueDepth: nullableNumber.optional(),
  cacheHitRate: nullableNumber,
  tokensPerS: nullableNumber.optional(),
  replicas: nullableNumber,
  hops: z
    .record(z.string(), HopLatency)
    .describe('Latency by hop (gateway, router, cache, queue, prefill, …)'),
  sampled: z
    .boolean()
    .optional()
    .describe(
      'True when head-sampled traces were scaled by 1 ÷ their sampling probability (OTel th in tracestate, else sampling.service_ratios)',
    ),
  samplingRatio: nullableNumber.optional().describe('Stored ÷ represented requests; null when not sampled'),
  source: z
    .enum(['traces', 'runtime_metrics'])
    .optional()
    .describe(
      "Where the request figures come from: traces, or runtime_metrics for a pool whose requests are not traced (its runtime's request and token counters and TTFT/e2e histograms)",
    ),
  other: z
    .boolean()
    .optional()
    .describe(
      `True for the one group that adds up every group past the cap (the ${MAX_SIGNAL_GROUPS} groups with the most requests keep their key); its key is empty`,
    ),
}).meta({ id: 'SignalGroup' });

export const SignalsSnapshot = openObject({
  at: z.string().describe('RFC 3339 event time the window ends at (default: the watermark)'),
  window: z.string().describe('The window, e.g. 5m'),
  groups: z.array(SignalGroup),
  truncated: z
    .boolean()
    .describe(
      'True when there were more groups than `maxGroups`: the rest are added up in the `other` group',
    ),
  maxGroups: z.number().describe('The cap on groups; the `other` group comes on top of it'),
  otherGroups: z.number().describe('Groups added up into the `other` group (0 when not truncated)'),
}).meta({ id: 'SignalsSnapshot' });

export const SignalSeries = openObject({
  signal: z.string(),
  step: z.string(),
  watermark: z
    .string()
    .nullable()
    .describe(
      'RFC 3339 watermark (newest event time − signals.lateness_ms). Points cover whole steps that end at or before it; later steps are still filling and are left out. Null without data.',
    ),
  series: z.array(
    openObject({
      key: z.record(z.string(), z.unknown()),
      points: z.array(
        z.object({
          t: z.string().describe('RFC 3339 end of the whole step the value covers'),
          v: nullableNumber,
        }),
      ),
    }),
  ),
}).meta({ id: 'SignalSeries' });

const nullableString = z.string().nullable();

export const TraceSummary = openObject({
  traceId: z.string(),
  name: z.string(),
  service: nullableString,
  hasRoot: z.boolean(),
  start: z.string().describe('RFC 3339 event time'),
  startNs: z.string().describe('Nanoseconds since the epoch, decimal'),
  endNs: z.string(),
  e2eMs: z.number(),
  ttftMs: nullableNumber,
  serverTtftMs: nullableNumber,
  pool: nullableString,
  model: nullableString,
  taskId: z.string(),
  attempt: z.number(),
}).meta({ id: 'TraceSummary' });

export const TraceList = z.object({
  traces: z.array(TraceSummary),
  limit: z.number(),
  truncated: z.boolean().describe('True when `limit` traces came back: there may be more'),
});

export const TraceWaterfall = openObject({
  traceId: z.string(),
  request: TraceSummary.nullable(),
  start: z.string(),
  startNs: z.string(),
  spans: z
    .array(openObject({ spanId: z.string(), name: z.string() }))
    .describe('Spans in tree order: a parent before its children, siblings by start time'),
}).meta({ id: 'TraceWaterfall' });

export const TaskSummary = openObject({
  taskId: z.string(),
  workflowType: nullableString,
  tenant: nullableString,
  pool: nullableString,
  model: nullableString,
  start: z.string(),
  end: z.string(),
  e2eMs: z.number(),
  status: z.string(),
  goodput: z
    .boolean()
    .nullable()
    .describe('Succeeded within the SLO on every final attempt; null while pending'),
  requests: z.number(),
  retries: z.number(),
}).meta({ id: 'TaskSummary' });

export const TaskList = z.object({
  tasks: z.array(TaskSummary),
  limit: z.number(),
  truncated: z.boolean(),
});
