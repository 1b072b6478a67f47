import { Attr, isOutcome } from '@governor/conventions';
import {
  applyAttributeAliases,
  secondsToMs,
  toBoolOrNull,
  toIntOrNull,
  toNumberOrNull,
  toStringOrNull,
} from './attribute-values.ts';
import type { HopClassifier } from './classify-hop.ts';
import type { SpanRow } from './span-row.ts';
import type { AttributeValue, Attributes, DecodedSpan, DecodedTraceRequest } from './types.ts';
import { findSpanProblem } from './validate-span.ts';

export interface NormalizeOptions {
  classifier: HopClassifier;
  /** Emitter attribute name → the name Governor understands. */
  aliases: Readonly<Record<string, string>>;
}

export interface NormalizedSpans {
  rows: SpanRow[];
  rejected: number;
  /** Up to a few human-readable reasons, for the partial-success message. */
  problems: string[];
}

const MAX_PROBLEMS = 5;
const ZERO_SPAN = '0000000000000000';
const RUNTIME_HOPS = new Set(['runtime', 'prefill', 'decode', 'scheduler']);
const FIRST_TOKEN_EVENTS = new Set([
  'first_token',
  'gen_ai.first_token',
  'first_chunk',
  'gen_ai.content.first_chunk',
]);

export function normalizeTraceRequest(
  request: DecodedTraceRequest,
  options: NormalizeOptions,
): NormalizedSpans {
  const rows: SpanRow[] = [];
  const problems: string[] = [];
  let rejected = 0;
  const hasAliases = Object.keys(options.aliases).length > 0;
  for (const rs of request.resourceSpans) {
    const resource = hasAliases ? applyAttributeAliases(rs.resource, options.aliases) : rs.resource;
    const resourceJson = JSON.stringify(rs.resource);
    for (const ss of rs.scopeSpans) {
      for (const span of ss.spans) {
        const problem = findSpanProblem(span);
        if (problem) {
          rejected++;
          if (problems.length < MAX_PROBLEMS)
            problems.push(`span "${span.name}" ${span.spanId || '(no id)'}: ${problem}`);
          continue;
        }
        rows.push(normalizeSpan(span, resource, resourceJson, ss.scope.name || null, options, hasAliases));
      }
    }
  }
  return { rows, rejected, problems };
}

function normalizeSpan(
  span: DecodedSpan,
  resource: Attributes,
  resourceJson: string,
  scope: string | null,
  options: NormalizeOptions,
  hasAliases: boolean,
): SpanRow {
  const attrs = hasAliases ? applyAttributeAliases(span.attributes, options.aliases) : span.attributes;
  const service = toStringOrNull(resource[Attr.serviceName]);
  const hop = options.classifier.classify(span.name, service, attrs);
  const traceId = span.traceId;
  const workflowId = toStringOrNull(lookup(attrs, resource, Attr.workflowId));
  const conversationId = toStringOrNull(lookup(attrs, resource, Attr.genAiConversationId));
  const resendCount = toIntOrNull(lookup(attrs, resource, Attr.httpResendCount));
  const finishReasons = lookup(attrs, resource, Attr.genAiResponseFinishReasons);
  const finishReasonsText =
    finishReasons === undefined || finishReasons === null
      ? null
      : typeof finishReasons === 'string'
        ? finishReasons
        : JSON.stringify(finishReasons);
  const ttftMs = secondsToMs(attrs[Attr.genAiResponseTimeToFirstChunk]);
  const serverTtftMs = secondsToMs(attrs[Attr.vllmLatencyTtft]);
  const errorType = toStringOrNull(lookup(attrs, resource, Attr.errorType));
  const replica =
    toStringOrNull(lookup(attrs, resource, Attr.replica)) ??
    (hop !== null && RUNTIME_HOPS.has(hop)
      ? (toStringOrNull(resource['service.instance.id']) ?? toStringOrNull(resource['host.name']))
      : null);
  return {
    traceId,
    spanId: span.spanId,
    parentSpanId: span.parentSpanId === '' || span.parentSpanId === ZERO_SPAN ? null : span.parentSpanId,
    name: span.name,
    kind: span.kind & 0xff,
    service,
    hop,
    startNs: span.startNs,
    endNs: span.endNs,
    durationMs: Number(span.endNs - span.startNs) / 1e6,
    statusCode: span.statusCode & 0xff,
    statusMessage: span.statusMessage === '' ? null : span.statusMessage,
    isRoot: span.parentSpanId === '' || span.parentSpanId === ZERO_SPAN,
    model: toStringOrNull(
      lookup(attrs, resource, Attr.genAiRequestModel) ?? lookup(attrs, resource, Attr.genAiResponseModel),
    ),
    pool: toStringOrNull(lookup(attrs, resource, Attr.pool)),
    region: toStringOrNull(lookup(attrs, resource, Attr.region) ?? resource['cloud.region']),
    gpuType: toStringOrNull(lookup(attrs, resource, Attr.gpuType)),
    replica,
    tenant: toStringOrNull(lookup(attrs, resource, Attr.tenant)),
    priority: toIntOrNull(lookup(attrs, resource, Attr.priority)),
    taskId: workflowId ?? conversationId ?? traceId,
    workflowId,
    workflowType: toStringOrNull(lookup(attrs, resource, Attr.workflowType)),
    workflowStep: toIntOrNull(lookup(attrs, resource, Attr.workflowStep)),
    workflowSteps: toIntOrNull(lookup(attrs, resource, Attr.workflowSteps)),
    conversationId,
    attempt:
      toIntOrNull(lookup(attrs, resource, Attr.attempt)) ?? (resendCount === null ? null : resendCount + 1),
    outcome: deriveOutcome(
      lookup(attrs, resource, Attr.outcome),
      span.statusCode,
      errorType,
      finishReasonsText,
    ),
    errorType,
    operation: toStringOrNull(attrs[Attr.genAiOperationName]),
    inputTokens: toIntOrNull(attrs[Attr.genAiUsageInputTokens] ?? attrs[Attr.vllmUsagePromptTokens]),
    outputTokens: toIntOrNull(attrs[Attr.genAiUsageOutputTokens] ?? attrs[Attr.vllmUsageCompletionTokens]),
    cachedTokens: toIntOrNull(attrs[Attr.genAiUsageCacheReadInputTokens]),
    ttftMs,
    serverTtftMs,
    firstTokenNs: findFirstTokenNs(span, ttftMs ?? serverTtftMs),
    queueMs: secondsToMs(attrs[Attr.vllmLatencyQueue]),
    prefillMs: secondsToMs(attrs[Attr.vllmLatencyPrefill]),
    decodeMs: secondsToMs(attrs[Attr.vllmLatencyDecode]),
    kvUsage: toNumberOrNull(attrs[Attr.kvCacheUsage]),
    queueDepth: toIntOrNull(attrs[Attr.queueDepth]),
    batchSize: toIntOrNull(attrs[Attr.batchSize]),
    costUsd: toNumberOrNull(attrs[Attr.costUsd]),
    cacheHit: toBoolOrNull(attrs[Attr.cacheHit]),
    finishReasons: finishReasonsText,
    attributes: JSON.stringify(span.attributes),
    resource: resourceJson,
    events:
      span.events.length === 0
        ? '[]'
        : JSON.stringify(
            span.events.map((e) => ({ timeNs: e.timeNs.toString(), name: e.name, attributes: e.attributes })),
          ),
    scope,
  };
}

/** A span attribute, else the same attribute on its resource. */
function lookup(attrs: Attributes, resource: Attributes, key: string): AttributeValue | undefined {
  const value = attrs[key];
  return value === undefined || value === null ? resource[key] : value;
}

function deriveOutcome(
  explicit: AttributeValue | undefined,
  statusCode: number,
  errorType: string | null,
  finishReasons: string | null,
): string {
  if (isOutcome(explicit)) return explicit;
  if (statusCode === 2) return errorType && /timeout|deadline/i.test(errorType) ? 'timeout' : 'error';
  if (finishReasons && /abort|cancel/i.test(finishReasons)) return 'cancelled';
  return 'success';
}

function findFirstTokenNs(span: DecodedSpan, ttftMs: number | null): bigint | null {
  for (const event of span.events) {
    if (FIRST_TOKEN_EVENTS.has(event.name) && event.timeNs > 0n) return event.timeNs;
  }
  if (ttftMs === null) return null;
  return span.startNs + BigInt(Math.round(ttftMs * 1e6));
}
