import { context, propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter as GrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as HttpJsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as HttpProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { ParentBasedSampler, type SpanExporter, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace';
import type { GovernorConfig } from '@governor/conventions';
import { SELF_SERVICE_NAME } from './self-tracing-spans.ts';

// Governor's own traces (self_telemetry.traces): the NodeSDK with one OTLP trace exporter, started
// and stopped with the server. Only traces — no metrics or logs providers, no auto-instrumentation
// (an HTTP instrumentation would trace the exporter's own requests). The spans themselves are made
// with @opentelemetry/api (self-tracing-spans.ts, packages/control, packages/alerts) and are no-ops
// while this is off.

export type SelfTracesConfig = GovernorConfig['self_telemetry']['traces'];
export type OtlpTraceProtocol = 'http/protobuf' | 'http/json' | 'grpc';

export interface SelfTracing {
  /** False when self_telemetry.traces.enabled is off or OTEL_SDK_DISABLED=true. */
  readonly enabled: boolean;
  /** Where spans go and how, for the start-up log line; null while off. */
  readonly target: { protocol: OtlpTraceProtocol; endpoint: string } | null;
  /** Exports what is buffered, then unregisters the SDK (a later start in the same process works). */
  shutdown(): Promise<void>;
}

const PROTOCOLS: readonly OtlpTraceProtocol[] = ['http/protobuf', 'http/json', 'grpc'];
const DISABLED: SelfTracing = { enabled: false, target: null, shutdown: async () => {} };

/** OTLP protocol: the config key, else OTEL_EXPORTER_OTLP_TRACES_PROTOCOL / _PROTOCOL, else http/protobuf. */
export function resolveProtocol(config: SelfTracesConfig, env: NodeJS.ProcessEnv): OtlpTraceProtocol {
  if (config.protocol) return config.protocol;
  const fromEnv = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL)?.trim();
  if (fromEnv && (PROTOCOLS as readonly string[]).includes(fromEnv)) return fromEnv as OtlpTraceProtocol;
  return 'http/protobuf';
}

/**
 * The URL the exporter is given, or undefined to let it read OTEL_EXPORTER_OTLP_* itself. A bare
 * http(s) base URL gets /v1/traces, as OTEL_EXPORTER_OTLP_ENDPOINT does; a URL with a path is kept.
 */
export function exporterUrl(config: SelfTracesConfig, protocol: OtlpTraceProtocol): string | undefined {
  if (!config.endpoint) return undefined;
  if (protocol === 'grpc') return config.endpoint;
  const url = new URL(config.endpoint);
  if (url.pathname === '/' || url.pathname === '') url.pathname = '/v1/traces';
  return url.toString();
}

/** What the exporter will use, mirroring its own env fallbacks; for the log line and the docs. */
function describeEndpoint(config: SelfTracesConfig, protocol: OtlpTraceProtocol, env: NodeJS.ProcessEnv) {
  const explicit = exporterUrl(config, protocol);
  if (explicit) return explicit;
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (protocol === 'grpc') return base ?? 'http://localhost:4317';
  return `${(base ?? 'http://localhost:4318').replace(/\/$/, '')}/v1/traces`;
}

function createExporter(protocol: OtlpTraceProtocol, url: string | undefined): SpanExporter {
  const options = url ? { url } : {};
  switch (protocol) {
    case 'grpc':
      return new GrpcTraceExporter(options);
    case 'http/json':
      return new HttpJsonTraceExporter(options);
    case 'http/protobuf':
      return new HttpProtoTraceExporter(options);
  }
}

/**
 * Starts the NodeSDK when self_telemetry.traces.enabled (and OTEL_SDK_DISABLED is not true).
 * The SDK registers process-wide (the OpenTelemetry API has one global tracer provider): with two
 * Governors in one process, spans of both go to the one that started self-tracing.
 */
export function startSelfTracing(
  config: SelfTracesConfig,
  env: NodeJS.ProcessEnv = process.env,
): SelfTracing {
  if (!config.enabled || env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return DISABLED;
  const protocol = resolveProtocol(config, env);
  const sdk = new NodeSDK({
    // service.name is fixed: it is how a receiving Governor recognises its own batches (ingest skips
    // tracing those, so a Governor pointed at itself does not trace its own exports in a loop).
    serviceName: SELF_SERVICE_NAME,
    traceExporter: createExporter(protocol, exporterUrl(config, protocol)),
    // Unset: NodeSDK reads OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG (default: parent-based always-on).
    ...(config.sample_ratio === undefined
      ? {}
      : { sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sample_ratio) }) }),
    // Traces only: no MeterProvider, and a LoggerProvider with no processors instead of the default
    // OTLP log exporter.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
  });
  sdk.start();
  let stopping: Promise<void> | null = null;
  return {
    enabled: true,
    target: { protocol, endpoint: describeEndpoint(config, protocol, env) },
    shutdown() {
      stopping ??= sdk.shutdown().finally(() => {
        // NodeSDK.shutdown flushes and stops its providers but leaves them registered; unregister so
        // the API is a no-op again and a later start (a restart in tests) can register afresh.
        trace.disable();
        context.disable();
        propagation.disable();
      });
      return stopping;
    },
  };
}
