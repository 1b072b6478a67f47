import { z } from 'zod';
import { BYTE_SIZE_UNITS, parseByteSize } from '../byte-size.ts';
import { HOPS } from '../hops.ts';
import { parseDurationMs } from '../duration.ts';
import { AlertsConfig, ReceiverConfig } from './alerts-config.ts';
import { ControlConfig, PolicyConfig, ActuatorConfig } from './control-config.ts';
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
    host: z.string().default('127.0.0.1'),
    http_port: z.number().int().min(0).max(65535).default(4318),
    grpc_port: z.number().int().min(0).max(65535).default(4317),
    data_dir: z.string().default('.governor'),
    /** Cap on a request body after decompression (OTLP spec recommends 64 MiB). */
    max_body_bytes: z
      .number()
      .int()
      .positive()
      .default(64 * 1024 * 1024),
    /** Spans allowed to wait in the write queue before intake answers 503 + Retry-After. */
    max_queued_spans: z.number().int().positive().default(400_000),
    /** Interval between scheduled CHECKPOINTs. */
    checkpoint_interval_s: z.number().positive().default(30),
    insecure: z.boolean().default(false),
    /** Ad-hoc SQL (POST /api/sql) is interrupted after this long. */
    sql_timeout_ms: z.number().int().positive().default(10_000),
    /**
     * DuckDB's memory_limit for the whole instance: ingest, signals, retention and ad-hoc SQL share
     * it (DuckDB has no per-connection limit). Past it, big sorts and aggregates spill to disk or fail.
     */
    duckdb_memory_limit: z.string().superRefine(checkMemoryLimit).default(DEFAULT_DUCKDB_MEMORY_LIMIT),
    /** DuckDB worker threads for the whole instance. */
    duckdb_threads: z.number().int().min(1).max(256).default(2),
  })
  .strict();
export type ServerConfig = z.infer<typeof ServerConfig>;

export const PoolConfig = z
  .object({
    name: z.string().min(1),
    /**
     * Resource or span attributes that select this pool's runtime spans and metric points, e.g.
     * `{k8s.deployment.name: vllm-llama8b}` or a pod label the Collector extracts (`inference.pool`).
     * Every entry must match. Without `match`, the pool matches a runtime whose resource
     * `k8s.deployment.name` (else `service.name`) equals its name.
     */
    match: z.record(z.string(), z.string()).optional(),
    gpu_type: z.string().min(1).optional(),
    gpus_per_replica: z.number().int().positive().default(1),
    peak_tokens_per_s_per_replica: z.number().positive().optional(),
    model: z.string().optional(),
    region: z.string().optional(),
    min_replicas: z.number().int().min(0).optional(),
    max_replicas: z.number().int().positive().optional(),
  })
  .strict();
export type PoolConfig = z.infer<typeof PoolConfig>;

export const PricingConfig = z
  .object({
    gpu_hour_usd: z.record(z.string(), z.number().nonnegative()).default({}),
    /** Price when a pool's GPU type has no entry. */
    default_gpu_hour_usd: z.number().nonnegative().optional(),
  })
  .strict();
export type PricingConfig = z.infer<typeof PricingConfig>;

export const SloConfig = z
  .object({
    ttft_ms: z.number().positive().optional(),
    e2e_ms: z.number().positive().optional(),
  })
  .strict();
export type SloConfig = z.infer<typeof SloConfig>;

export const SignalsConfig = z
  .object({
    /** Watermark = newest event time − lateness. */
    lateness_ms: z.number().int().min(0).default(10_000),
    default_window: z.string().default('5m'),
  })
  .strict();
export type SignalsConfig = z.infer<typeof SignalsConfig>;

export const SamplingConfig = z
  .object({
    /**
     * Head-sampling probability per service.name (0 < p ≤ 1) for emitters that do not carry OTel's
     * `th` threshold in tracestate. Counts from sampled traces are scaled by 1 / p.
     */
    service_ratios: z.record(z.string(), z.number().gt(0).max(1)).default({}),
  })
  .strict();
export type SamplingConfig = z.infer<typeof SamplingConfig>;

export const HopRuleConfig = z
  .object({
    hop: z.enum(HOPS),
    span_name: z.string().optional(),
    service_name: z.string().optional(),
    attribute: z.string().optional(),
    attribute_equals: z.string().optional(),
  })
  .strict()
  .refine((r) => r.span_name || r.service_name || r.attribute, {
    message: 'a hop rule needs at least one of span_name, service_name or attribute',
  });
export type HopRuleConfig = z.infer<typeof HopRuleConfig>;

export const AuthToken = z
  .object({
    name: z.string().min(1),
    token_sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'expected 64 lowercase hex characters')
      .optional(),
    token_env: z.string().optional(),
    scopes: z.array(z.enum(['ingest', 'read', 'operate', 'admin'])).min(1),
  })
  .strict()
  .refine((t) => t.token_sha256 || t.token_env, { message: 'a token needs token_sha256 or token_env' });
export type AuthToken = z.infer<typeof AuthToken>;

export const AuthConfig = z.object({ tokens: z.array(AuthToken).default([]) }).strict();
export type AuthConfig = z.infer<typeof AuthConfig>;

export const RetentionConfig = z
  .object({
    /** Raw spans older than this (event time) are exported to Parquet and deleted. 0 keeps forever. */
    spans_ttl_hours: z.number().min(0).default(0),
    /** Raw metric points; default: the same as spans_ttl_hours. 0 keeps forever. */
    metric_points_ttl_hours: z.number().min(0).optional(),
    /** Per-request rollups (request_facts) behind `requests`/`tasks`; kept longer than raw spans. 0 keeps forever. */
    rollups_ttl_hours: z.number().min(0).default(0),
    /** How often the retention job runs while Governor is up. */
    run_interval_s: z.number().positive().default(600),
  })
  .strict()
  .refine((r) => r.rollups_ttl_hours === 0 || r.rollups_ttl_hours >= r.spans_ttl_hours, {
    message:
      'rollups_ttl_hours must be 0 (keep) or at least spans_ttl_hours: rollups outlive the raw spans they summarize',
    path: ['rollups_ttl_hours'],
  });
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
  })
  .strict()
  .describe('Event-time guards at intake: what a host with a wrong clock may not do to the watermark.');
export type IngestConfig = z.infer<typeof IngestConfig>;

/** The newest event time Governor accepts at `nowNs` (server clock): now + ingest.max_future_skew. */
export function maxAcceptedEventNs(ingest: IngestConfig, nowNs: bigint): bigint {
  return nowNs + BigInt(Math.round(parseDurationMs(ingest.max_future_skew))) * 1_000_000n;
}

export const GovernorConfig = z
  .object({
    server: ServerConfig.default(ServerConfig.parse({})),
    pricing: PricingConfig.default(PricingConfig.parse({})),
    pools: z.array(PoolConfig).default([]),
    slo: SloConfig.default({}),
    signals: SignalsConfig.default(SignalsConfig.parse({})),
    sampling: SamplingConfig.default(SamplingConfig.parse({})),
    hop_rules: z.array(HopRuleConfig).default([]),
    /** Maps an emitter's attribute name to the one Governor understands, e.g. `my.pool: governor.pool`. */
    attribute_aliases: z.record(z.string(), z.string()).default({}),
    auth: AuthConfig.default({ tokens: [] }),
    retention: RetentionConfig.default(RetentionConfig.parse({})),
    ingest: IngestConfig.default(IngestConfig.parse({})),
    control: ControlConfig.default(ControlConfig.parse({})),
    policies: z.array(PolicyConfig).default([]),
    actuators: z.array(ActuatorConfig).default([]),
    alerts: AlertsConfig.default(AlertsConfig.parse({})),
    receivers: z.array(ReceiverConfig).default([]),
    dashboards: DashboardsConfig.default(DashboardsConfig.parse({})),
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
