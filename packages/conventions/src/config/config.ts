import { z } from 'zod';
import { BYTE_SIZE_UNITS, parseByteSize } from '../byte-size.ts';
import { HOPS } from '../hops.ts';
import { parseDurationMs } from '../duration.ts';
import { AlertsConfig, ReceiverConfig } from './alerts-config.ts';
import { ControlConfig, PolicyConfig, ActuatorConfig } from './control-config.ts';
import { StoreConfig } from './store-config.ts';
import { DashboardsConfig } from '../dashboard.ts';
import { type RawIssue, describeIssues } from './describe-config-issue.ts';

// The one YAML file (docs/config.md lists every key), snake_case like the OpenTelemetry Collector's config.
// Parsed once at start; everything inside Governor trusts the typed result.

export const DEFAULT_DUCKDB_MEMORY_LIMIT = '1GB';
/** A floor against slips like `128KB`: DuckDB accepts far less, then fails ordinary queries. */
const MIN_DUCKDB_MEMORY_LIMIT = '128MB';

function checkMemoryLimit(value: string, ctx: z.RefinementCtx): void {
  let bytes: number;
  try {
    bytes = parseByteSize(value);
  } catch {
    ctx.addIssue({
      code: 'custom',
      message: `expected a size with a unit (${BYTE_SIZE_UNITS.join(', ')}), e.g. 1GB or 512MB; got "${value}"`,
    });
    return;
  }
  if (bytes < parseByteSize(MIN_DUCKDB_MEMORY_LIMIT)) {
    ctx.addIssue({
      code: 'custom',
      message: `must be at least ${MIN_DUCKDB_MEMORY_LIMIT} (DuckDB needs room for ingest and the signal queries); got "${value}"`,
    });
  }
}

export const ServerConfig = z
  .object({
    host: z
      .string()
      .default('127.0.0.1')
      .describe(
        'Address the HTTP and OTLP/gRPC listeners bind to. Beyond loopback Governor needs API tokens (auth.tokens) or insecure: true.',
      ),
    http_port: z
      .number()
      .int()
      .min(0)
      .max(65535)
      .default(4318)
      .describe(
        'Port of the console, the REST API, /metrics and OTLP/HTTP (/v1/traces, /v1/metrics); 0 picks a free port.',
      ),
    grpc_port: z
      .number()
      .int()
      .min(0)
      .max(65535)
      .default(4317)
      .describe('Port of OTLP/gRPC; 0 picks a free port.'),
    data_dir: z
      .string()
      .default('.governor')
      .describe(
        'Directory of the DuckDB database (governor.duckdb) and its Parquet exports; created when missing.',
      ),
    max_body_bytes: z
      .number()
      .int()
      .positive()
      .default(64 * 1024 * 1024)
      .describe(
        'Cap on a request body after decompression (the OTLP specification recommends 64 MiB); a larger body is answered 413.',
      ),
    max_queued_spans: z
      .number()
      .int()
      .positive()
      .default(400_000)
      .describe('Spans allowed to wait in the write queue before intake answers 503 with Retry-After.'),
    checkpoint_interval_s: z
      .number()
      .positive()
      .default(30)
      .describe(
        'Seconds between scheduled DuckDB CHECKPOINTs, which fold the write-ahead log into the database file.',
      ),
    read_deadline_ms: z
      .number()
      .int()
      .positive()
      .default(30_000)
      .describe(
        'An internal read (signals, traces, alerts, the control loop) — its wait for the request rollup to take in what was acknowledged, its waits for one of the three readers and every query it runs, together — is interrupted past this and answered 503 GOV_ERR_READ_TIMEOUT: one heavy read or a rollup far behind cannot hold the readers.',
      ),
    max_waiting_reads: z
      .number()
      .int()
      .positive()
      .default(64)
      .describe(
        'Internal reads allowed to wait for a reader; more are answered 503 GOV_ERR_READ_BUSY at once.',
      ),
    request_timeout_ms: z
      .number()
      .int()
      .positive()
      .default(60_000)
      .describe(
        'A request (headers and body) must arrive within this or is answered 408: a slow uploader cannot hold a connection open forever.',
      ),
    headers_timeout_ms: z
      .number()
      .int()
      .positive()
      .default(10_000)
      .describe("A request's headers must arrive within this."),
    max_connections: z
      .number()
      .int()
      .positive()
      .default(2_048)
      .describe('Open HTTP connections (SSE subscribers included) past this are refused at accept.'),
    insecure: z
      .boolean()
      .default(false)
      .describe(
        'Allow listening beyond loopback without API tokens (for a proxy in front of Governor that authenticates); Governor warns at start.',
      ),
    sql_timeout_ms: z
      .number()
      .int()
      .positive()
      .default(10_000)
      .describe('Ad-hoc SQL (POST /api/sql, governor query) is interrupted after this many milliseconds.'),
    duckdb_memory_limit: z
      .string()
      .superRefine(checkMemoryLimit)
      .default(DEFAULT_DUCKDB_MEMORY_LIMIT)
      .describe(
        "DuckDB's memory_limit for the whole instance (a size such as 1GB or 512MB, at least 128MB): ingest, signals, retention and ad-hoc SQL share it, as DuckDB has no per-connection limit. Past it, big sorts and aggregates spill to disk or fail.",
      ),
    duckdb_threads: z
      .number()
      .int()
      .min(1)
      .max(256)
      .default(2)
      .describe('DuckDB worker threads for the whole instance.'),
    duckdb_vacuum: z
      .boolean()
      .default(false)
      .describe(
        "Let DuckDB's checkpoints merge row groups that have deleted rows (its max_vacuum_tasks). Off, a checkpoint still drops row groups whose rows were all deleted, which is what retention's deletes of whole time ranges leave, but keeps partly deleted ones as they are: the holes the request rollup leaves when it rewrites a trace's row are not reclaimed. On, checkpoints under retention took about twice as long (2.25× wall time, 2.42× CPU: docs/operations.md) and the request rollup waits for each.",
      ),
  })
  .strict()
  .describe('Listeners, storage and DuckDB resources.');
export type ServerConfig = z.infer<typeof ServerConfig>;

export const PoolConfig = z
  .object({
    name: z
      .string()
      .min(1)
      .describe('Pool name: the pool dimension of signals, recommendation targets and actuator payloads.'),
    match: z
      .record(z.string(), z.string())
      .optional()
      .describe(
        "Resource or span attributes that select this pool's runtime spans and metric points, e.g. {k8s.deployment.name: vllm-llama8b} or a pod label the Collector extracts (inference.pool). Every entry must match. Without match, the pool matches a runtime whose resource k8s.deployment.name (else service.name) equals its name.",
      ),
    gpu_type: z
      .string()
      .min(1)
      .optional()
      .describe('GPU type of a replica, e.g. H100; picks the price in pricing.gpu_hour_usd.'),
    gpus_per_replica: z
      .number()
      .int()
      .positive()
      .default(1)
      .describe("GPUs per replica; the pool's cost is replica-hours × this × the GPU-hour price."),
    peak_tokens_per_s_per_replica: z
      .number()
      .positive()
      .optional()
      .describe(
        'Generated tokens/s one replica sustains at most: the denominator of compute utilization. Unset, it is learned as the p99 of each minute over the previous 24 h.',
      ),
    model: z
      .string()
      .optional()
      .describe('Model the pool serves (gen_ai.request.model), for grouping and model downgrades.'),
    region: z.string().optional().describe('Region of the pool, for grouping signals.'),
    min_replicas: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe('Fewest replicas the control loop sizes this pool to.'),
    max_replicas: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('Most replicas the control loop sizes this pool to.'),
    kubernetes: z
      .object({
        kind: z
          .string()
          .min(1)
          .describe(
            'Kind of the workload with a /scale subresource: Deployment, StatefulSet, LeaderWorkerSet, …',
          ),
        name: z.string().min(1).describe('Workload name.'),
        namespace: z.string().min(1).describe('Workload namespace.'),
        api_version: z
          .string()
          .optional()
          .describe('group/version of the workload; unset, apps/v1 (right for Deployment and StatefulSet).'),
        resource: z
          .string()
          .optional()
          .describe('Plural resource name in the API path; unset, the lower-cased kind + s (deployments).'),
        service: z
          .string()
          .optional()
          .describe("Service the HTTPRoute's backendRefs name for this pool; unset, the workload name."),
        inference_pool: z
          .string()
          .min(1)
          .optional()
          .describe(
            "llm-d / Gateway API Inference Extension: the InferencePool (inference.networking.k8s.io/v1) the HTTPRoute's backendRefs name for this pool; set, traffic weights go to that backendRef instead of the Service's.",
          ),
      })
      .strict()
      .optional()
      .describe('The workload behind the pool, for the kubernetes actuator (docs/kubernetes.md).'),
  })
  .strict()
  .describe(
    'The inference pools: how their telemetry is recognized, their hardware and the replica bounds the control loop keeps.',
  );
export type PoolConfig = z.infer<typeof PoolConfig>;

export const PricingConfig = z
  .object({
    gpu_hour_usd: z
      .record(z.string(), z.number().nonnegative())
      .default({})
      .describe("USD per GPU-hour by GPU type (a pool's gpu_type), e.g. {H100: 2.5}."),
    default_gpu_hour_usd: z
      .number()
      .nonnegative()
      .optional()
      .describe("USD per GPU-hour when a pool's GPU type has no entry in gpu_hour_usd."),
  })
  .strict()
  .describe('GPU prices behind cost, success per dollar and cost-aware recommendations.');
export type PricingConfig = z.infer<typeof PricingConfig>;

export const SloConfig = z
  .object({
    ttft_ms: z.number().positive().optional().describe('Time to first token a request must meet, in ms.'),
    e2e_ms: z.number().positive().optional().describe('End-to-end latency a request must meet, in ms.'),
  })
  .strict()
  .describe(
    'Service-level objectives: a task meeting them is good (goodput, success per dollar, SLO burn-rate alerts, the control loop).',
  );
export type SloConfig = z.infer<typeof SloConfig>;

export const SignalsConfig = z
  .object({
    lateness_ms: z
      .number()
      .int()
      .min(0)
      .default(10_000)
      .describe(
        'Watermark = newest event time − lateness: how long late spans are waited for before a window counts as complete.',
      ),
    task_idle_ms: z
      .number()
      .int()
      .min(1_000)
      .default(1_800_000)
      .describe(
        "A task (workflow or conversation) whose next request starts more than this after all of its earlier requests ended is a new task from there on, as a session timeout splits web sessions. The request rollup looks this far back, and back to the start of the tasks it finds, for the requests and tasks of new spans, so its cost follows the recent past, not the whole history; a trace's spans further apart than this with no span covering the gap are separate requests until such a span arrives.",
      ),
    default_window: z
      .string()
      .default('5m')
      .describe('Window of GET /api/signals and of alert rules that name none (a duration such as 5m).'),
  })
  .strict()
  .describe('Event-time windows of the signals.');
export type SignalsConfig = z.infer<typeof SignalsConfig>;

export const SamplingConfig = z
  .object({
    service_ratios: z
      .record(z.string(), z.number().gt(0).max(1))
      .default({})
      .describe(
        "Head-sampling probability per service.name (0 < p ≤ 1) for emitters that do not carry OTel's th threshold in tracestate. Counts from sampled traces are scaled by 1 / p.",
      ),
  })
  .strict()
  .describe('Head sampling of emitters, so counts are scaled back to the real request rate.');
export type SamplingConfig = z.infer<typeof SamplingConfig>;

export const HopRuleConfig = z
  .object({
    hop: z.enum(HOPS).describe('The hop a matching span is attributed to.'),
    span_name: z.string().optional().describe('Matches spans of this name.'),
    service_name: z.string().optional().describe('Matches spans whose resource service.name is this.'),
    attribute: z
      .string()
      .optional()
      .describe('Matches spans carrying this attribute (with attribute_equals: this value).'),
    attribute_equals: z.string().optional().describe('The value attribute must have.'),
  })
  .strict()
  .refine((r) => r.span_name || r.service_name || r.attribute, {
    message: 'a hop rule needs at least one of span_name, service_name or attribute',
  })
  .describe(
    'Hop classification rules tried, in order, before the built-in ones for vLLM, llm-d, SGLang and common gateways. Every condition given must match.',
  );
export type HopRuleConfig = z.infer<typeof HopRuleConfig>;

export const AuthToken = z
  .object({
    name: z.string().min(1).describe('Who holds the token; shown in logs and the audit log.'),
    token_sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'expected 64 lowercase hex characters')
      .optional()
      .describe(
        'sha256 of the token, lowercase hex (governor config hash-token); Governor keeps only the hash.',
      ),
    token_env: z.string().optional().describe('Environment variable holding the token itself.'),
    scopes: z
      .array(z.enum(['ingest', 'read', 'operate', 'admin']))
      .min(1)
      .describe(
        'What the token may do: ingest (OTLP only), read (API and console), operate (read, plus approving recommendations and changing policies), admin (everything).',
      ),
  })
  .strict()
  .refine((t) => t.token_sha256 || t.token_env, { message: 'a token needs token_sha256 or token_env' });
export type AuthToken = z.infer<typeof AuthToken>;

export const AuthConfig = z
  .object({
    tokens: z
      .array(AuthToken)
      .default([])
      .describe(
        'API tokens; GOVERNOR_TOKENS adds more. With none, the API is open and Governor listens on loopback only unless server.insecure.',
      ),
  })
  .strict()
  .describe('Authentication of the API, the console and OTLP intake.');
export type AuthConfig = z.infer<typeof AuthConfig>;

export const RetentionConfig = z
  .object({
    spans_ttl_hours: z
      .number()
      .min(0)
      .default(0)
      .describe(
        'Raw spans older than this (event time) are exported to Parquet and deleted; 0 keeps them forever.',
      ),
    metric_points_ttl_hours: z
      .number()
      .min(0)
      .optional()
      .describe('The same for raw metric points; unset, spans_ttl_hours applies. 0 keeps them forever.'),
    rollups_ttl_hours: z
      .number()
      .min(0)
      .default(0)
      .describe(
        'Per-request rollups (request_facts) behind the requests and tasks views, kept longer than raw spans; 0 keeps them forever, else at least spans_ttl_hours.',
      ),
    run_interval_s: z
      .number()
      .positive()
      .default(600)
      .describe('Seconds between runs of the retention job while Governor is up.'),
  })
  .strict()
  .refine((r) => r.rollups_ttl_hours === 0 || r.rollups_ttl_hours >= r.spans_ttl_hours, {
    message:
      'rollups_ttl_hours must be 0 (keep) or at least spans_ttl_hours: rollups outlive the raw spans they summarize',
    path: ['rollups_ttl_hours'],
  })
  .describe('How long raw telemetry and rollups are kept.');
export type RetentionConfig = z.infer<typeof RetentionConfig>;

export const IngestConfig = z
  .object({
    max_future_skew: z
      .string()
      .refine(
        (text) => {
          try {
            return parseDurationMs(text) >= 0;
          } catch {
            return false;
          }
        },
        { message: 'expected a duration such as 30s, 5m or 1h' },
      )
      .default('5m')
      .describe(
        'A span or metric point dated more than this ahead of the server clock is rejected (OTLP partial success, counted as governor_ingest_rejected_total{reason="future"}); the watermark and the control loop never pass now + this. Past times (backfills, replays) are always accepted.',
      ),
    max_rollup_lag: z
      .string()
      .refine(
        (text) => {
          try {
            return parseDurationMs(text) > 0;
          } catch {
            return false;
          }
        },
        { message: 'expected a positive duration such as 30s or 1m' },
      )
      .default('15s')
      .describe(
        'Span exports are refused with 503 and Retry-After (GOV_ERR_INGEST_ROLLUP_BEHIND) while the request rollup, which signals, alerts and the control loop read, is further behind ingest than this by the wall clock (governor_rollup_lag_seconds) and also needs longer than this to take in the spans written but not yet rolled up, by the cost of its recent refreshes, a fixed cost per run plus a cost per span (governor_rollup_catch_up_seconds): a checkpoint stalls the rollup for seconds with few spans waiting, which refusing spans would not end. Spans then wait in the exporters instead of in an ever longer backlog the reads would wait for; keep it well under server.read_deadline_ms, since a read waits for the rollup first. Not while the rollup is failing: then spans are kept. Metric points are always taken.',
      ),
  })
  .strict()
  .describe('Event-time guards at intake: what a host with a wrong clock may not do to the watermark.');
export type IngestConfig = z.infer<typeof IngestConfig>;

/** ingest.max_rollup_lag in ms. */
export function maxRollupLagMs(ingest: IngestConfig): number {
  return parseDurationMs(ingest.max_rollup_lag);
}

/** The newest event time Governor accepts at `nowNs` (server clock): now + ingest.max_future_skew. */
export function maxAcceptedEventNs(ingest: IngestConfig, nowNs: bigint): bigint {
  return nowNs + BigInt(Math.round(parseDurationMs(ingest.max_future_skew))) * 1_000_000n;
}

export const SelfTelemetryConfig = z
  .object({
    traces: z
      .object({
        enabled: z
          .boolean()
          .default(false)
          .describe(
            "Export Governor's own spans (OTLP ingest batches, /api/signals queries and rollup refreshes, control ticks, alert evaluations) with service.name governor. OTEL_SDK_DISABLED=true turns it off again.",
          ),
        endpoint: z
          .string()
          .url()
          .optional()
          .describe(
            'Where to send them. http/*: a base URL such as http://collector:4318 gets /v1/traces appended, a URL with a path is used as given; grpc: http://collector:4317. Unset: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT, else localhost:4318 (http) or localhost:4317 (grpc).',
          ),
        protocol: z
          .enum(['http/protobuf', 'http/json', 'grpc'])
          .optional()
          .describe(
            'OTLP transport. Unset: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf.',
          ),
        sample_ratio: z
          .number()
          .min(0)
          .max(1)
          .optional()
          .describe(
            "Share of Governor's own root spans kept (parent-based trace-id ratio). Unset: OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG, else every span.",
          ),
      })
      .strict()
      .default({ enabled: false })
      .describe("Governor's own traces (docs/operations.md), off by default."),
  })
  .strict()
  .describe('Telemetry about Governor itself, exported over OTLP to any backend.');
export type SelfTelemetryConfig = z.infer<typeof SelfTelemetryConfig>;

export const GovernorConfig = z
  .object({
    server: ServerConfig.default(ServerConfig.parse({})),
    store: StoreConfig.default(StoreConfig.parse({})),
    pricing: PricingConfig.default(PricingConfig.parse({})),
    pools: z.array(PoolConfig).default([]),
    slo: SloConfig.default({}),
    signals: SignalsConfig.default(SignalsConfig.parse({})),
    sampling: SamplingConfig.default(SamplingConfig.parse({})),
    hop_rules: z.array(HopRuleConfig).default([]),
    attribute_aliases: z
      .record(z.string(), z.string())
      .default({})
      .describe(
        "Maps an emitter's attribute name to the one Governor understands, e.g. my.pool: governor.pool (docs/telemetry.md).",
      ),
    auth: AuthConfig.default({ tokens: [] }),
    retention: RetentionConfig.default(RetentionConfig.parse({})),
    ingest: IngestConfig.default(IngestConfig.parse({})),
    control: ControlConfig.default(ControlConfig.parse({})),
    policies: z.array(PolicyConfig).default([]),
    actuators: z.array(ActuatorConfig).default([]),
    alerts: AlertsConfig.default(AlertsConfig.parse({})),
    receivers: z.array(ReceiverConfig).default([]),
    dashboards: DashboardsConfig.default(DashboardsConfig.parse({})),
    self_telemetry: SelfTelemetryConfig.default(SelfTelemetryConfig.parse({})),
  })
  .strict();
export type GovernorConfig = z.infer<typeof GovernorConfig>;

export interface ConfigIssue {
  path: string;
  /** The same path as keys and indexes, for finding the spot in the YAML file. */
  segments: (string | number)[];
  message: string;
}

/** Validates a parsed YAML/JSON object; issues carry a dotted path such as `pools.0.gpus_per_replica`. */
export function parseGovernorConfig(
  raw: unknown,
): { ok: true; config: GovernorConfig } | { ok: false; issues: ConfigIssue[] } {
  const result = GovernorConfig.safeParse(raw ?? {});
  if (result.success) return { ok: true, config: result.data };
  return { ok: false, issues: describeIssues(GovernorConfig, result.error.issues as RawIssue[]) };
}
