// Attribute names Governor understands (docs/telemetry.md). Standard names first, Governor's own
// namespace for what no standard names. Every governor.* name can be aliased in config.

export const Attr = {
  // OpenTelemetry GenAI semantic conventions
  genAiRequestModel: 'gen_ai.request.model',
  genAiResponseModel: 'gen_ai.response.model',
  genAiSystem: 'gen_ai.system',
  genAiOperationName: 'gen_ai.operation.name',
  genAiConversationId: 'gen_ai.conversation.id',
  genAiUsageInputTokens: 'gen_ai.usage.input_tokens',
  genAiUsageOutputTokens: 'gen_ai.usage.output_tokens',
  genAiUsageCacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  genAiResponseTimeToFirstChunk: 'gen_ai.response.time_to_first_chunk',
  genAiResponseFinishReasons: 'gen_ai.response.finish_reasons',
  // vLLM's names (float seconds for latencies)
  vllmUsagePromptTokens: 'gen_ai.usage.prompt_tokens',
  vllmUsageCompletionTokens: 'gen_ai.usage.completion_tokens',
  vllmLatencyTtft: 'gen_ai.latency.time_to_first_token',
  vllmLatencyE2e: 'gen_ai.latency.e2e',
  vllmLatencyQueue: 'gen_ai.latency.time_in_queue',
  vllmLatencyPrefill: 'gen_ai.latency.time_in_model_prefill',
  vllmLatencyDecode: 'gen_ai.latency.time_in_model_decode',
  /** vLLM V0 only: totals over the request's forward passes and model executions. */
  vllmLatencyForward: 'gen_ai.latency.time_in_model_forward',
  vllmLatencyExecute: 'gen_ai.latency.time_in_model_execute',
  vllmRequestId: 'gen_ai.request.id',
  // llm-d and the Gateway API Inference Extension
  /** llm-d P/D sidecar (`llm_d.pd_proxy.request`): decode start − request start, ms: the user's TTFT. */
  llmdTrueTtftMs: 'llm_d.pd_proxy.true_ttft_ms',
  /** GIE/llm-d EPP (`gateway.request_orchestration`): the model the request was routed for. */
  gieTargetModel: 'target_model',
  // HTTP, errors, resource
  httpResendCount: 'http.request.resend_count',
  /**
   * The OpenAI (and every Stainless-generated) SDK's retry counter, sent on every request
   * (openai-python 1.95.1 `src/openai/_base_client.py` `_build_headers`: `x-stainless-retry-count` =
   * retries taken, 0 on a first attempt), as a gateway that captures the request header records it
   * (HTTP semconv `http.request.header.<key>`, a string array; Envoy custom tags give a string).
   */
  httpRequestHeaderStainlessRetryCount: 'http.request.header.x-stainless-retry-count',
  /**
   * The deadline of a request forwarded by Envoy (every Envoy-based gateway: Envoy Gateway, Istio,
   * kgateway in front of llm-d): the router sets `x-envoy-expected-rq-timeout-ms` on the upstream
   * request to the time it allows it to complete — the per-try timeout, else the route's, or the one
   * the client asked for with `x-envoy-upstream-rq-timeout-ms` — and answers 504 past it (Envoy
   * `source/common/router/router.cc`, `FilterUtility::finalTimeout` and `onResponseTimeout`). Captured
   * on the gateway's span of that call as HTTP semconv request-header attribute (a string array; an
   * Envoy custom tag gives a string) of milliseconds.
   */
  httpRequestHeaderEnvoyExpectedRqTimeoutMs: 'http.request.header.x-envoy-expected-rq-timeout-ms',
  httpResponseStatusCode: 'http.response.status_code',
  rpcGrpcStatusCode: 'rpc.grpc.status_code',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  /** Envoy's tracing tag on a gateway's span: the upstream host:port it sent the request to. */
  envoyUpstreamAddress: 'upstream_address',
  errorType: 'error.type',
  serviceName: 'service.name',
  // Governor's own namespace
  hop: 'governor.hop',
  pool: 'governor.pool',
  region: 'governor.region',
  gpuType: 'governor.gpu.type',
  replica: 'governor.replica',
  tenant: 'governor.tenant',
  priority: 'governor.priority',
  workflowId: 'governor.workflow.id',
  workflowType: 'governor.workflow.type',
  workflowStep: 'governor.workflow.step',
  workflowSteps: 'governor.workflow.steps',
  attempt: 'governor.attempt',
  outcome: 'governor.outcome',
  cacheHit: 'governor.cache.hit',
  queueDepth: 'governor.queue.depth',
  kvCacheUsage: 'governor.kv_cache.usage',
  batchSize: 'governor.batch.size',
  costUsd: 'governor.cost.usd',
} as const;

/** Gauges and runtime counters Governor reads from OTLP metrics. */
export const Metric = {
  poolReplicas: 'governor.pool.replicas',
  vllmKvCacheUsage: 'vllm:kv_cache_usage_perc',
  vllmRequestsWaiting: 'vllm:num_requests_waiting',
  vllmRequestsRunning: 'vllm:num_requests_running',
  dcgmGpuUtil: 'DCGM_FI_DEV_GPU_UTIL',
  /** Cumulative sums per replica: prompt tokens prefilled, tokens generated. */
  vllmPromptTokens: 'vllm:prompt_tokens_total',
  vllmGenerationTokens: 'vllm:generation_tokens_total',
  /** Cumulative histogram per replica of the tokens each engine step processed (count = steps). */
  vllmIterationTokens: 'vllm:iteration_tokens_total',
} as const;

export const OUTCOMES = ['success', 'error', 'timeout', 'rejected', 'preempted', 'cancelled'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export function isOutcome(value: unknown): value is Outcome {
  return typeof value === 'string' && (OUTCOMES as readonly string[]).includes(value);
}
