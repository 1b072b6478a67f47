import { Attr } from '@governor/conventions';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Attributes, Span, Tracer } from '@opentelemetry/api';
import { toHrTime } from '../engine/sim-time.ts';
import type { Attempt } from '../sim/sim-types.ts';
import type { DeterministicIdGenerator } from './deterministic-id-generator.ts';

export interface SpanTracers {
  gateway: Tracer;
  router: Tracer;
  vllm: Tracer;
}

const seconds = (ms: number): number => ms / 1000;

/**
 * Emits one attempt's trace with its real hop timestamps: the gateway root, `route` and
 * `cache.lookup` (router), vLLM's `llm_request` with `scheduler.queue` / `prefill` / `decode`, and
 * `stream` from first to last token. Returns the number of spans emitted.
 */
export function emitAttemptSpans(
  attempt: Attempt,
  tracers: SpanTracers,
  ids: DeterministicIdGenerator,
  startEpochMs: number,
): number {
  const at = (ms: number) => toHrTime(startEpochMs, ms);
  const a = attempt;
  const task = a.task;
  const spec = task.spec;
  const pool = a.pool?.spec;
  const failed = a.outcome !== 'success';
  ids.beginTrace(a.serial);
  let count = 1;

  const rootAttributes: Attributes = {
    [Attr.hop]: 'gateway',
    'http.request.method': 'POST',
    'http.route': '/v1/chat/completions',
    'http.response.status_code': a.statusCode,
    [Attr.genAiOperationName]: 'chat',
    [Attr.genAiRequestModel]: a.model,
    [Attr.tenant]: spec.tenant,
    [Attr.priority]: spec.priority,
    [Attr.workflowId]: spec.id,
    [Attr.workflowType]: spec.type,
    [Attr.workflowStep]: a.stepIndex,
    [Attr.workflowSteps]: spec.steps.length,
    [Attr.attempt]: a.attemptNo,
    [Attr.outcome]: a.outcome!,
    [Attr.genAiUsageInputTokens]: a.promptTokens,
    [Attr.genAiUsageOutputTokens]: a.generated,
  };
  if (a.attemptNo > 1) rootAttributes[Attr.httpResendCount] = a.attemptNo - 1;
  // The deadline the gateway enforces (Envoy's x-envoy-expected-rq-timeout-ms, as it captures it).
  rootAttributes[Attr.httpRequestHeaderEnvoyExpectedRqTimeoutMs] = [String(Math.round(a.policy.timeoutMs))];
  if (spec.conversationId) rootAttributes[Attr.genAiConversationId] = spec.conversationId;
  if (pool) {
    rootAttributes[Attr.pool] = pool.name;
    rootAttributes[Attr.region] = pool.region;
    rootAttributes[Attr.gpuType] = pool.gpuType;
  }
  if (a.firstTokenMs >= 0)
    rootAttributes[Attr.genAiResponseTimeToFirstChunk] = seconds(a.firstTokenMs - a.startMs);
  if (failed) rootAttributes[Attr.errorType] = a.errorType ?? 'error';

  const root = tracers.gateway.startSpan(
    'POST /v1/chat/completions',
    { kind: SpanKind.SERVER, startTime: at(a.startMs), attributes: rootAttributes },
    ROOT_CONTEXT,
  );
  const rootContext = trace.setSpan(ROOT_CONTEXT, root);

  if (a.routeEndMs >= 0) {
    const routeAttributes: Attributes = { [Attr.hop]: 'router', [Attr.genAiRequestModel]: a.model };
    if (pool) routeAttributes[Attr.pool] = pool.name;
    if (a.replica) routeAttributes[Attr.replica] = a.replica.id;
    const route = tracers.router.startSpan(
      'route',
      { startTime: at(a.gatewayEndMs), attributes: routeAttributes },
      rootContext,
    );
    if (!pool) route.setStatus({ code: SpanStatusCode.ERROR, message: a.errorType ?? 'no route' });
    if (!pool && a.errorType) route.setAttribute(Attr.errorType, a.errorType);
    route.end(at(a.routeEndMs));
    count += 1;
  }
  if (a.cacheEndMs >= 0 && pool) {
    const cache = tracers.router.startSpan(
      'cache.lookup',
      {
        startTime: at(a.routeEndMs),
        attributes: {
          [Attr.hop]: 'cache',
          [Attr.pool]: pool.name,
          [Attr.cacheHit]: a.routedCachedTokens > 0,
          [Attr.genAiUsageCacheReadInputTokens]: a.routedCachedTokens,
        },
      },
      rootContext,
    );
    cache.end(at(a.cacheEndMs));
    count += 1;
  }
  if (a.arriveMs >= 0 && a.replica && pool) {
    count += emitRuntimeSpans(a, tracers.vllm, rootContext, at);
  }
  if (a.firstTokenMs >= 0) {
    const streamEndMs = Math.max(a.firstTokenMs, a.endMs);
    const stream = tracers.gateway.startSpan(
      'stream',
      {
        startTime: at(a.firstTokenMs),
        attributes: { [Attr.hop]: 'stream', [Attr.genAiUsageOutputTokens]: a.generated },
      },
      rootContext,
    );
    stream.addEvent('first_token', at(a.firstTokenMs));
    if (failed) stream.setStatus({ code: SpanStatusCode.ERROR, message: a.errorType ?? 'error' });
    stream.end(at(streamEndMs));
    count += 1;
  }
  if (failed) root.setStatus({ code: SpanStatusCode.ERROR, message: a.errorType ?? 'error' });
  root.end(at(a.endMs));
  return count;
}

function emitRuntimeSpans(
  a: Attempt,
  tracer: Tracer,
  rootContext: ReturnType<typeof trace.setSpan>,
  at: (ms: number) => [number, number],
): number {
  const pool = a.pool!.spec;
  const replicaEndMs = a.replicaEndMs >= 0 ? a.replicaEndMs : a.endMs;
  const admitted = a.admitMs >= 0;
  const hasToken = a.firstTokenMs >= 0;
  const lastTokenMs = a.lastTokenMs >= 0 ? a.lastTokenMs : replicaEndMs;
  const failed = a.outcome !== 'success';
  const attributes: Attributes = {
    [Attr.hop]: 'runtime',
    [Attr.vllmRequestId]: `cmpl-${a.serial.toString(16)}`,
    [Attr.genAiRequestModel]: a.model,
    [Attr.genAiResponseModel]: a.model,
    [Attr.vllmUsagePromptTokens]: a.promptTokens,
    [Attr.vllmUsageCompletionTokens]: a.generated,
    [Attr.genAiResponseFinishReasons]: JSON.stringify([failed ? 'abort' : 'stop']),
    [Attr.vllmLatencyE2e]: seconds(replicaEndMs - a.arriveMs),
    [Attr.vllmLatencyQueue]: seconds((admitted ? a.admitMs : replicaEndMs) - a.arriveMs),
    [Attr.pool]: pool.name,
    [Attr.region]: pool.region,
    [Attr.replica]: a.replica!.id,
    [Attr.gpuType]: pool.gpuType,
    [Attr.kvCacheUsage]: a.kvUsageAtAdmission,
    [Attr.queueDepth]: a.queueDepthAtArrival,
    [Attr.batchSize]: a.batchSizeAtAdmission,
    [Attr.genAiUsageCacheReadInputTokens]: a.cachedTokens,
  };
  if (hasToken) {
    attributes[Attr.vllmLatencyTtft] = seconds(a.firstTokenMs - a.arriveMs);
    attributes[Attr.vllmLatencyDecode] = seconds(lastTokenMs - a.firstTokenMs);
    if (admitted) attributes[Attr.vllmLatencyPrefill] = seconds(a.firstTokenMs - a.admitMs);
  }
  if (a.preemptions > 0) attributes['governor.preemptions'] = a.preemptions;
  if (failed) attributes[Attr.errorType] = a.errorType ?? 'error';
  const request: Span = tracer.startSpan(
    'llm_request',
    { kind: SpanKind.SERVER, startTime: at(a.arriveMs), attributes },
    rootContext,
  );
  const requestContext = trace.setSpan(rootContext, request);
  let count = 1;
  const queue = tracer.startSpan(
    'scheduler.queue',
    {
      startTime: at(a.arriveMs),
      attributes: { [Attr.hop]: 'scheduler', [Attr.queueDepth]: a.queueDepthAtArrival },
    },
    requestContext,
  );
  queue.end(at(admitted ? a.admitMs : replicaEndMs));
  count += 1;
  if (admitted) {
    const prefill = tracer.startSpan(
      'prefill',
      {
        startTime: at(a.admitMs),
        attributes: {
          [Attr.hop]: 'prefill',
          [Attr.vllmUsagePromptTokens]: a.promptTokens,
          [Attr.genAiUsageCacheReadInputTokens]: a.cachedTokens,
        },
      },
      requestContext,
    );
    if (!hasToken && failed)
      prefill.setStatus({ code: SpanStatusCode.ERROR, message: a.errorType ?? 'error' });
    prefill.end(at(hasToken ? a.firstTokenMs : replicaEndMs));
    count += 1;
  }
  if (hasToken) {
    const decode = tracer.startSpan(
      'decode',
      {
        startTime: at(a.firstTokenMs),
        attributes: { [Attr.hop]: 'decode', [Attr.vllmUsageCompletionTokens]: a.generated },
      },
      requestContext,
    );
    if (failed) decode.setStatus({ code: SpanStatusCode.ERROR, message: a.errorType ?? 'error' });
    decode.end(at(Math.max(a.firstTokenMs, lastTokenMs)));
    count += 1;
  }
  if (failed) request.setStatus({ code: SpanStatusCode.ERROR, message: a.errorType ?? 'error' });
  request.end(at(replicaEndMs));
  return count;
}
