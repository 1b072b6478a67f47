// One attempt's trace as a Kubernetes fleet sends it (the simulator's default shapes):
//   gateway SERVER root (HTTP semconv) → gateway CLIENT span to the chosen pod (GenAI semconv)
//   → vLLM V1 `llm_request` SERVER span, parented through traceparent, on the pod's own resource.
// vLLM V1 (vllm/v1/engine/output_processor.py `do_tracing`) emits one span per request the engine
// finished, none for requests the client aborted or a crash lost, and sets no model, finish reason,
// status or error; timestamps it never set stay 0.0 in engine-core monotonic seconds, so a request
// that failed before its first token reports time_to_first_token 0.0 and a negative prefill time.

import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Attributes, Tracer } from '@opentelemetry/api';
import { hashUniform } from '../engine/random.ts';
import { toHrTime } from '../engine/sim-time.ts';
import type { Replica } from '../fleet/replica-engine.ts';
import type { Attempt } from '../sim/sim-types.ts';
import type { DeterministicIdGenerator } from './deterministic-id-generator.ts';
import { VLLM_PORT } from './k8s-identity.ts';

export interface RealSpanTracers {
  gateway: Tracer;
  /** The tracer of the vLLM pod serving `replica` (its resource carries the pod's k8s.* attributes). */
  runtime(replica: Replica): Tracer;
  /** The pod IP the gateway connects to for `replica`. */
  podIp(replica: Replica): string;
}

export const GATEWAY_ROUTE = '/v1/chat/completions';
/** Sampling parameters every simulated client sends (vLLM omits falsy ones from its span). */
export const CLIENT_SAMPLING = { temperature: 0.7, topP: 0.95, n: 1, minMaxTokens: 1024 } as const;

const seconds = (ms: number): number => ms / 1000;

/** Engine-core monotonic clock (seconds since the node booted), in which vLLM stamps a request. */
function monotonicS(a: Attempt, ms: number): number {
  const bootS = 86_400 * (1 + 29 * hashUniform(a.replica!.nodeIndex, 0xb007));
  return bootS + ms / 1000;
}

/** Emits one attempt's trace; returns the number of spans emitted. */
export function emitRealAttemptSpans(
  a: Attempt,
  tracers: RealSpanTracers,
  ids: DeterministicIdGenerator,
  startEpochMs: number,
): number {
  const at = (ms: number) => toHrTime(startEpochMs, ms);
  const spec = a.task.spec;
  ids.beginTrace(a.serial);
  let count = 1;

  const status = a.statusCode;
  const rootAttributes: Attributes = {
    'http.request.method': 'POST',
    'http.route': GATEWAY_ROUTE,
    'url.path': GATEWAY_ROUTE,
    'url.scheme': 'http',
    'http.response.status_code': status,
    // Operator-configured custom tags copied from request headers.
    'governor.tenant': spec.tenant,
    'governor.priority': spec.priority,
    'gen_ai.conversation.id': spec.conversationId ?? spec.id,
    // The OpenAI SDK's retry counter (openai-python 1.95.1 `_base_client.py`: retries taken, on every
    // request), captured by the gateway as an HTTP semconv request header.
    'http.request.header.x-stainless-retry-count': [String(a.attemptNo - 1)],
  };
  if (status >= 500) rootAttributes['error.type'] = String(status);
  const root = tracers.gateway.startSpan(
    `POST ${GATEWAY_ROUTE}`,
    { kind: SpanKind.SERVER, startTime: at(a.startMs), attributes: rootAttributes },
    ROOT_CONTEXT,
  );
  // HTTP semconv: a server span's status is ERROR on 5xx only; 4xx (429 shed, 404) stay unset.
  if (status >= 500) root.setStatus({ code: SpanStatusCode.ERROR });
  const rootContext = trace.setSpan(ROOT_CONTEXT, root);

  if (a.pool && a.replica && a.cacheEndMs >= 0) {
    const replica = a.replica;
    const upstream = a.upstreamStatusCode;
    const ok = a.outcome === 'success';
    const clientAttributes: Attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'vllm',
      'gen_ai.request.model': a.model,
      'gen_ai.request.stream': true,
      'server.address': tracers.podIp(replica),
      'server.port': VLLM_PORT,
      // The deadline Envoy's router puts on the upstream request (the client's timeout, which it
      // enforces with a 504), as the gateway captures the request header.
      'http.request.header.x-envoy-expected-rq-timeout-ms': [String(Math.round(a.policy.timeoutMs))],
    };
    if (upstream > 0) clientAttributes['http.response.status_code'] = upstream;
    if (ok) {
      clientAttributes['gen_ai.response.model'] = a.model;
      clientAttributes['gen_ai.usage.input_tokens'] = a.promptTokens;
      clientAttributes['gen_ai.usage.output_tokens'] = a.generated;
      clientAttributes['gen_ai.response.finish_reasons'] = ['stop'];
    } else {
      clientAttributes['error.type'] = upstream > 0 ? String(upstream) : (a.errorType ?? 'error');
    }
    if (a.firstTokenMs >= 0)
      clientAttributes['gen_ai.response.time_to_first_chunk'] = seconds(a.firstTokenMs - a.cacheEndMs);
    const client = tracers.gateway.startSpan(
      `chat ${a.model}`,
      { kind: SpanKind.CLIENT, startTime: at(a.cacheEndMs), attributes: clientAttributes },
      rootContext,
    );
    if (!ok) client.setStatus({ code: SpanStatusCode.ERROR });
    count += 1;
    // The engine finished the request (completed or failed in the engine): vLLM traces it.
    const engineFinished = upstream === 200 || upstream === 500;
    if (engineFinished && a.arriveMs >= 0) {
      count += emitLlmRequestSpan(a, tracers.runtime(replica), trace.setSpan(rootContext, client), at);
    }
    client.end(at(a.endMs));
  }
  root.end(at(a.endMs));
  return count;
}

function emitLlmRequestSpan(
  a: Attempt,
  tracer: Tracer,
  parent: ReturnType<typeof trace.setSpan>,
  at: (ms: number) => [number, number],
): number {
  const endMs = a.replicaEndMs >= 0 ? a.replicaEndMs : a.endMs;
  const mono = (ms: number) => monotonicS(a, ms);
  // vLLM's RequestStateStats: timestamps default to 0.0 and are set as the request progresses.
  const queuedTs = mono(a.arriveMs);
  const scheduledTs = a.admitMs >= 0 ? mono(a.admitMs) : 0;
  const firstTokenTs = a.firstTokenMs >= 0 ? mono(a.firstTokenMs) : 0;
  const lastTokenTs = a.firstTokenMs >= 0 ? mono(a.lastTokenMs >= 0 ? a.lastTokenMs : endMs) : 0;
  const attributes: Attributes = {
    'gen_ai.request.id': `chatcmpl-${a.serial.toString(16).padStart(12, '0')}`,
    'gen_ai.request.max_tokens': Math.max(CLIENT_SAMPLING.minMaxTokens, a.outputTokens),
    'gen_ai.request.temperature': CLIENT_SAMPLING.temperature,
    'gen_ai.request.top_p': CLIENT_SAMPLING.topP,
    'gen_ai.request.n': CLIENT_SAMPLING.n,
    'gen_ai.usage.prompt_tokens': a.promptTokens,
    'gen_ai.usage.completion_tokens': a.generated,
    'gen_ai.latency.time_in_queue': scheduledTs - queuedTs,
    'gen_ai.latency.time_to_first_token': a.firstTokenMs >= 0 ? seconds(a.firstTokenMs - a.arriveMs) : 0,
    'gen_ai.latency.e2e': seconds(endMs - a.arriveMs),
    'gen_ai.latency.time_in_model_prefill': firstTokenTs - scheduledTs,
    'gen_ai.latency.time_in_model_decode': lastTokenTs - firstTokenTs,
    'gen_ai.latency.time_in_model_inference': lastTokenTs - scheduledTs,
  };
  const span = tracer.startSpan(
    'llm_request',
    { kind: SpanKind.SERVER, startTime: at(a.arriveMs), attributes },
    parent,
  );
  span.end(at(endMs));
  return 1;
}
