// One normalized span: the typed columns of docs/telemetry.md plus the raw attributes. The column list
// here is the single source for the store's `spans` table and its appender (order matters).

export interface SpanRow {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: number;
  service: string | null;
  hop: string | null;
  startNs: bigint;
  endNs: bigint;
  durationMs: number;
  statusCode: number;
  statusMessage: string | null;
  isRoot: boolean;
  model: string | null;
  pool: string | null;
  region: string | null;
  gpuType: string | null;
  replica: string | null;
  tenant: string | null;
  priority: number | null;
  taskId: string;
  workflowId: string | null;
  workflowType: string | null;
  workflowStep: number | null;
  workflowSteps: number | null;
  conversationId: string | null;
  attempt: number | null;
  outcome: string;
  errorType: string | null;
  operation: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
  cachedTokens: number | null;
  /** User-perceived time to first chunk reported on this span (gen_ai.response.time_to_first_chunk). */
  ttftMs: number | null;
  /** Time to first token measured inside the runtime (vLLM gen_ai.latency.time_to_first_token). */
  serverTtftMs: number | null;
  /** Absolute time of the first output token when this span knows it (event or TTFT attribute). */
  firstTokenNs: bigint | null;
  queueMs: number | null;
  prefillMs: number | null;
  decodeMs: number | null;
  kvUsage: number | null;
  queueDepth: number | null;
  batchSize: number | null;
  costUsd: number | null;
  cacheHit: boolean | null;
  finishReasons: string | null;
  attributes: string;
  resource: string;
  events: string;
  scope: string | null;
  /**
   * 1 ÷ the head-sampling probability the trace was kept with (OTel's `th` in tracestate, else the
   * configured ratio of the span's service): how many requests this one stands for. Null = unsampled
   * or unknown.
   */
  sampleWeight: number | null;
  /**
   * Where the request went, host only: a client span's `server.address` or an Envoy gateway span's
   * `upstream_address` (the pod the gateway picked), a runtime span's own address (`k8s.pod.ip`,
   * else the host of `service.instance.id`).
   * Lets a request that failed before any runtime keep the pool of the pod it was sent to.
   */
  endpoint: string | null;
}

export type SpanColumnType =
  | 'VARCHAR'
  | 'BIGINT'
  | 'INTEGER'
  | 'DOUBLE'
  | 'BOOLEAN'
  | 'UTINYINT'
  | 'TINYINT'
  | 'JSON';

export const SPAN_COLUMNS: readonly { column: string; field: keyof SpanRow; type: SpanColumnType }[] = [
  { column: 'trace_id', field: 'traceId', type: 'VARCHAR' },
  { column: 'span_id', field: 'spanId', type: 'VARCHAR' },
  { column: 'parent_span_id', field: 'parentSpanId', type: 'VARCHAR' },
  { column: 'name', field: 'name', type: 'VARCHAR' },
  { column: 'kind', field: 'kind', type: 'UTINYINT' },
  { column: 'service', field: 'service', type: 'VARCHAR' },
  { column: 'hop', field: 'hop', type: 'VARCHAR' },
  { column: 'start_ns', field: 'startNs', type: 'BIGINT' },
  { column: 'end_ns', field: 'endNs', type: 'BIGINT' },
  { column: 'duration_ms', field: 'durationMs', type: 'DOUBLE' },
  { column: 'status_code', field: 'statusCode', type: 'UTINYINT' },
  { column: 'status_message', field: 'statusMessage', type: 'VARCHAR' },
  { column: 'is_root', field: 'isRoot', type: 'BOOLEAN' },
  { column: 'model', field: 'model', type: 'VARCHAR' },
  { column: 'pool', field: 'pool', type: 'VARCHAR' },
  { column: 'region', field: 'region', type: 'VARCHAR' },
  { column: 'gpu_type', field: 'gpuType', type: 'VARCHAR' },
  { column: 'replica', field: 'replica', type: 'VARCHAR' },
  { column: 'tenant', field: 'tenant', type: 'VARCHAR' },
  { column: 'priority', field: 'priority', type: 'INTEGER' },
  { column: 'task_id', field: 'taskId', type: 'VARCHAR' },
  { column: 'workflow_id', field: 'workflowId', type: 'VARCHAR' },
  { column: 'workflow_type', field: 'workflowType', type: 'VARCHAR' },
  { column: 'workflow_step', field: 'workflowStep', type: 'INTEGER' },
  { column: 'workflow_steps', field: 'workflowSteps', type: 'INTEGER' },
  { column: 'conversation_id', field: 'conversationId', type: 'VARCHAR' },
  { column: 'attempt', field: 'attempt', type: 'INTEGER' },
  { column: 'outcome', field: 'outcome', type: 'VARCHAR' },
  { column: 'error_type', field: 'errorType', type: 'VARCHAR' },
  { column: 'operation', field: 'operation', type: 'VARCHAR' },
  { column: 'input_tokens', field: 'inputTokens', type: 'INTEGER' },
  { column: 'output_tokens', field: 'outputTokens', type: 'INTEGER' },
  { column: 'cached_tokens', field: 'cachedTokens', type: 'INTEGER' },
  { column: 'ttft_ms', field: 'ttftMs', type: 'DOUBLE' },
  { column: 'server_ttft_ms', field: 'serverTtftMs', type: 'DOUBLE' },
  { column: 'first_token_ns', field: 'firstTokenNs', type: 'BIGINT' },
  { column: 'queue_ms', field: 'queueMs', type: 'DOUBLE' },
  { column: 'prefill_ms', field: 'prefillMs', type: 'DOUBLE' },
  { column: 'decode_ms', field: 'decodeMs', type: 'DOUBLE' },
  { column: 'kv_usage', field: 'kvUsage', type: 'DOUBLE' },
  { column: 'queue_depth', field: 'queueDepth', type: 'INTEGER' },
  { column: 'batch_size', field: 'batchSize', type: 'INTEGER' },
  { column: 'cost_usd', field: 'costUsd', type: 'DOUBLE' },
  { column: 'cache_hit', field: 'cacheHit', type: 'BOOLEAN' },
  { column: 'finish_reasons', field: 'finishReasons', type: 'VARCHAR' },
  { column: 'attributes', field: 'attributes', type: 'JSON' },
  { column: 'resource', field: 'resource', type: 'JSON' },
  { column: 'events', field: 'events', type: 'JSON' },
  { column: 'scope', field: 'scope', type: 'VARCHAR' },
  { column: 'sample_weight', field: 'sampleWeight', type: 'DOUBLE' },
  { column: 'endpoint', field: 'endpoint', type: 'VARCHAR' },
];

export interface MetricPointRow {
  name: string;
  type: string;
  unit: string | null;
  timeNs: bigint;
  startNs: bigint | null;
  value: number | null;
  count: number | null;
  sum: number | null;
  min: number | null;
  max: number | null;
  bucketCounts: string | null;
  explicitBounds: string | null;
  quantiles: string | null;
  isMonotonic: boolean;
  temporality: number;
  service: string | null;
  pool: string | null;
  region: string | null;
  replica: string | null;
  model: string | null;
  attributes: string;
  resource: string;
}

export const METRIC_POINT_COLUMNS: readonly {
  column: string;
  field: keyof MetricPointRow;
  type: SpanColumnType;
}[] = [
  { column: 'name', field: 'name', type: 'VARCHAR' },
  { column: 'type', field: 'type', type: 'VARCHAR' },
  { column: 'unit', field: 'unit', type: 'VARCHAR' },
  { column: 'time_ns', field: 'timeNs', type: 'BIGINT' },
  { column: 'start_ns', field: 'startNs', type: 'BIGINT' },
  { column: 'value', field: 'value', type: 'DOUBLE' },
  { column: 'count', field: 'count', type: 'DOUBLE' },
  { column: 'sum', field: 'sum', type: 'DOUBLE' },
  { column: 'min', field: 'min', type: 'DOUBLE' },
  { column: 'max', field: 'max', type: 'DOUBLE' },
  { column: 'bucket_counts', field: 'bucketCounts', type: 'JSON' },
  { column: 'explicit_bounds', field: 'explicitBounds', type: 'JSON' },
  { column: 'quantiles', field: 'quantiles', type: 'JSON' },
  { column: 'is_monotonic', field: 'isMonotonic', type: 'BOOLEAN' },
  { column: 'temporality', field: 'temporality', type: 'UTINYINT' },
  { column: 'service', field: 'service', type: 'VARCHAR' },
  { column: 'pool', field: 'pool', type: 'VARCHAR' },
  { column: 'region', field: 'region', type: 'VARCHAR' },
  { column: 'replica', field: 'replica', type: 'VARCHAR' },
  { column: 'model', field: 'model', type: 'VARCHAR' },
  { column: 'attributes', field: 'attributes', type: 'JSON' },
  { column: 'resource', field: 'resource', type: 'JSON' },
];
