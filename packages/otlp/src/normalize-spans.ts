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
import { type FleetIdentity, samplingProbabilityFromTraceState } from './fleet-identity.ts';
import type { SpanRow } from './span-row.ts';
import type { AttributeValue, Attributes, DecodedSpan, DecodedTraceRequest } from './types.ts';
import { findSpanProblem } from './validate-span.ts';

export interface NormalizeOptions {
  classifier: HopClassifier;
  /** Emitter attribute name → the name Governor understands. */
  aliases: Readonly<Record<string, string>>;
  /** Pools, replicas and GPU types from standard attributes; without it only governor.* attributes name them. */
  identity?: FleetIdentity;
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
  // Retries taken so far: the HTTP client's resend count, else the SDK's retry header as the gateway
  // captured it (a string array under HTTP semconv, a string as an Envoy custom tag).
  const resendCount =
    toIntOrNull(lookup(attrs, resource, Attr.httpResendCount)) ??
    toIntOrNull(firstOf(lookup(attrs, resource, Attr.httpRequestHeaderStainlessRetryCount)));
  const finishReasons = lookup(attrs, resource, Attr.genAiResponseFinishReasons);
  const finishReasonsText =
    finishReasons === undefined || finishReasons === null
      ? null
      : typeof finishReasons === 'string'
        ? finishReasons
        : JSON.stringify(finishReasons);
  // vLLM leaves a latency it never measured at 0.0 (a request that failed before its first token):
  // absent, not an instant first token.
  // The client's TTFT: GenAI semconv's time to first chunk (s), or llm-d's P/D sidecar's
  // `true_ttft_ms` (decode start − request start), not either vLLM's own TTFT under disaggregation.
  const ttftMs =
    positiveSecondsToMs(attrs[Attr.genAiResponseTimeToFirstChunk]) ?? positiveMs(attrs[Attr.llmdTrueTtftMs]);
  const serverTtftMs = positiveSecondsToMs(attrs[Attr.vllmLatencyTtft]);
  const queueMs = secondsToMs(attrs[Attr.vllmLatencyQueue]);
  const e2eMs = positiveSecondsToMs(attrs[Attr.vllmLatencyE2e]);
  const errorType = toStringOrNull(lookup(attrs, resource, Attr.errorType));
  const runtimeSide = hop !== null && RUNTIME_HOPS.has(hop);
  const identity = options.identity;
  const replica =
    toStringOrNull(lookup(attrs, resource, Attr.replica)) ??
    (runtimeSide ? (identity?.replica(attrs, resource) ?? legacyReplica(resource)) : null);
  const pool = toStringOrNull(lookup(attrs, resource, Attr.pool)) ?? identity?.pool(attrs, resource) ?? null;
  const phases = modelPhases(attrs, serverTtftMs, queueMs, e2eMs);
  const sampled =
    samplingProbabilityFromTraceState(span.traceState) ?? identity?.samplingRatio(service) ?? null;
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
      lookup(attrs, resource, Attr.genAiRequestModel) ??
        lookup(attrs, resource, Attr.genAiResponseModel) ??
        attrs[Attr.gieTargetModel],
    ),
    pool,
    region: toStringOrNull(lookup(attrs, resource, Attr.region) ?? resource['cloud.region']),
    gpuType:
      toStringOrNull(lookup(attrs, resource, Attr.gpuType)) ?? identity?.gpuType(attrs, resource) ?? null,
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
      lookup(attrs, resource, Attr.outcome) ??
        (hop === 'runtime' && isUnfinishedVllmRequest(attrs) ? 'error' : undefined),
      span.statusCode,
      toIntOrNull(attrs[Attr.httpResponseStatusCode]),
      toIntOrNull(attrs[Attr.rpcGrpcStatusCode]),
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
    queueMs,
    prefillMs: phases.prefillMs,
    decodeMs: phases.decodeMs,
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
    sampleWeight: sampled === null || sampled >= 1 ? null : 1 / sampled,
    endpoint:
      span.kind === SPAN_KIND_CLIENT && attrs[Attr.serverAddress] !== undefined
        ? hostOf(toStringOrNull(attrs[Attr.serverAddress]))
        : runtimeSide
          ? (toStringOrNull(resource['k8s.pod.ip']) ??
            hostOf(toStringOrNull(resource['service.instance.id'])))
          : hostOf(toStringOrNull(attrs[Attr.envoyUpstreamAddress])),
  };
}

const SPAN_KIND_CLIENT = 3;

/** `10.0.3.7:8000` → `10.0.3.7`, `[::1]:8000` → `::1`. */
function hostOf(address: string | null): string | null {
  if (address === null) return null;
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (bracketed) return bracketed[1]!;
  const colon = address.lastIndexOf(':');
  return colon > 0 && address.indexOf(':') === colon && /^\d+$/.test(address.slice(colon + 1))
    ? address.slice(0, colon)
    : address;
}

/** A span attribute, else the same attribute on its resource. */
function lookup(attrs: Attributes, resource: Attributes, key: string): AttributeValue | undefined {
  const value = attrs[key];
  return value === undefined || value === null ? resource[key] : value;
}

/**
 * A span's outcome by the standards, most specific first: Governor's explicit override; the HTTP
 * status (semconv: a server span leaves its status unset on 4xx, so the code is what tells); the gRPC
 * status; the span status; vLLM's finish reason (`error`, `abort`; `stop` and `length` completed);
 * `error.type`, which semconv sets only on failure.
 */
function deriveOutcome(
  explicit: AttributeValue | undefined,
  statusCode: number,
  httpStatus: number | null,
  grpcStatus: number | null,
  errorType: string | null,
  finishReasons: string | null,
): string {
  if (isOutcome(explicit)) return explicit;
  const timeout = errorType !== null && TIMEOUT_ERROR.test(errorType);
  if (httpStatus !== null && httpStatus >= 400) {
    if (httpStatus === 429 || httpStatus === 503) return 'rejected';
    if (httpStatus === 408 || httpStatus === 504) return 'timeout';
    if (httpStatus === 499) return 'cancelled';
    return timeout ? 'timeout' : 'error';
  }
  if (grpcStatus !== null && grpcStatus !== 0) {
    if (grpcStatus === GRPC_CANCELLED) return 'cancelled';
    if (grpcStatus === GRPC_DEADLINE_EXCEEDED) return 'timeout';
    if (grpcStatus === GRPC_RESOURCE_EXHAUSTED || grpcStatus === GRPC_UNAVAILABLE) return 'rejected';
    return 'error';
  }
  if (statusCode === 2) return timeout ? 'timeout' : 'error';
  if (finishReasons !== null) {
    if (/\berror\b/i.test(finishReasons)) return 'error';
    if (/\b(?:abort|cancel)/i.test(finishReasons)) return 'cancelled';
  }
  if (errorType !== null && errorType !== '') return timeout ? 'timeout' : 'error';
  return 'success';
}

const TIMEOUT_ERROR = /timeout|timed.?out|deadline/i;
const GRPC_CANCELLED = 1;
const GRPC_DEADLINE_EXCEEDED = 4;
const GRPC_RESOURCE_EXHAUSTED = 8;
const GRPC_UNAVAILABLE = 14;

/** Seconds to ms where 0.0 means "never measured" (vLLM's default for an unset latency). */
function positiveSecondsToMs(value: AttributeValue | undefined): number | null {
  const ms = secondsToMs(value);
  return ms === null || ms <= 0 ? null : ms;
}

/**
 * Prefill and decode time inside the runtime. vLLM V1 reports them
 * (`gen_ai.latency.time_in_model_prefill/decode`); V0 reports only queue, TTFT and e2e (its
 * forward/execute times are totals over the request), so prefill is TTFT − queue and decode is
 * e2e − TTFT, the same intervals V1 measures (both count from arrival).
 */
function modelPhases(
  attrs: Attributes,
  serverTtftMs: number | null,
  queueMs: number | null,
  e2eMs: number | null,
): { prefillMs: number | null; decodeMs: number | null } {
  const prefill = positiveSecondsToMs(attrs[Attr.vllmLatencyPrefill]);
  const decode = secondsToMs(attrs[Attr.vllmLatencyDecode]);
  if (prefill !== null || (decode !== null && decode > 0) || serverTtftMs === null)
    return { prefillMs: prefill, decodeMs: serverTtftMs === null ? null : decode };
  return {
    prefillMs: queueMs === null ? null : Math.max(0, serverTtftMs - queueMs),
    decodeMs: e2eMs === null ? null : Math.max(0, e2eMs - serverTtftMs),
  };
}

function positiveMs(value: AttributeValue | undefined): number | null {
  const ms = toNumberOrNull(value);
  return ms === null || ms <= 0 ? null : ms;
}

/**
 * vLLM V1 sets no status, error or finish reason on `llm_request`; a request the engine finished
 * with `error` or `abort` before any token still gets its span, with `time_to_first_token` left at
 * 0.0 and no completion tokens. Nothing that completed looks like that (every request asks for at
 * least one token).
 */
function isUnfinishedVllmRequest(attrs: Attributes): boolean {
  const ttft = toNumberOrNull(attrs[Attr.vllmLatencyTtft]);
  const completion = toNumberOrNull(
    attrs[Attr.vllmUsageCompletionTokens] ?? attrs[Attr.genAiUsageOutputTokens],
  );
  return ttft === 0 && (completion === null || completion === 0);
}

/** Before k8s attributes were understood: the SDK's instance id, else the host. */
function legacyReplica(resource: Attributes): string | null {
  return toStringOrNull(resource['service.instance.id']) ?? toStringOrNull(resource['host.name']);
}

function findFirstTokenNs(span: DecodedSpan, ttftMs: number | null): bigint | null {
  for (const event of span.events) {
    if (FIRST_TOKEN_EVENTS.has(event.name) && event.timeNs > 0n) return event.timeNs;
  }
  if (ttftMs === null) return null;
  return span.startNs + BigInt(Math.round(ttftMs * 1e6));
}

/** The first element of an array value (captured HTTP headers are string arrays), else the value. */
function firstOf(value: AttributeValue | undefined): AttributeValue | undefined {
  return Array.isArray(value) ? (value[0] as AttributeValue | undefined) : value;
}
