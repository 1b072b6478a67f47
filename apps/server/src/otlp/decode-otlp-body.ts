import type { GovernorConfig, HopRuleConfig } from '@governor/conventions';
import {
  type HopClassifier,
  type MetricPointRow,
  type SpanRow,
  type FleetIdentityOptions,
  createFleetIdentity,
  createHopClassifier,
  decodeMetricsRequestJson,
  decodeMetricsRequestProtobuf,
  decodeTraceRequestJson,
  decodeTraceRequestProtobuf,
  normalizeMetricsRequest,
  normalizeTraceRequest,
} from '@governor/otlp';
// The clock alone: the store's entry point would load DuckDB into every decode worker.
import { readThreadCpuUs } from '@governor/store/thread-cpu-clock';

// decode → validate/normalize for one request body: pure, and the same on the main thread and in
// the decode workers. Throws OtlpDecodeError for a body that is not an export request.

export type OtlpFormat = 'protobuf' | 'json';
export type OtlpSignal = 'traces' | 'metrics';

export interface DecodedBody {
  spans: SpanRow[];
  metrics: MetricPointRow[];
  rejected: number;
  problems: string[];
}

export interface DecodeSettings {
  classifier: HopClassifier;
  aliases: Readonly<Record<string, string>>;
  identity: ReturnType<typeof createFleetIdentity>;
}

/** What normalization needs of the config to name pools, replicas and GPU types (plain data: it crosses to the workers). */
export function fleetIdentityOptions(config: GovernorConfig): FleetIdentityOptions {
  return {
    pools: config.pools.map((p) => ({ name: p.name, match: p.match })),
    gpuTypes: Object.keys(config.pricing.gpu_hour_usd),
    samplingRatios: config.sampling.service_ratios,
  };
}

export function createDecodeSettings(
  hopRules: readonly HopRuleConfig[],
  aliases: Readonly<Record<string, string>>,
  fleet: FleetIdentityOptions = { pools: [] },
): DecodeSettings {
  const classifier = createHopClassifier(
    hopRules.map((r) => ({
      hop: r.hop,
      spanName: r.span_name,
      serviceName: r.service_name,
      attribute: r.attribute,
      attributeEquals: r.attribute_equals,
    })),
  );
  return { classifier, aliases, identity: createFleetIdentity(fleet) };
}

/** CPU microseconds of the decoding thread spent on each step (see IngestCpu). */
export interface DecodeCpu {
  decodeUs: number;
  normalizeUs: number;
}

export function decodeOtlpBody(
  signal: OtlpSignal,
  body: Uint8Array,
  format: OtlpFormat,
  settings: DecodeSettings,
  cpu?: DecodeCpu,
): DecodedBody {
  const text = () => Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  const started = cpu ? readThreadCpuUs() : 0;
  let decodedAt = 0;
  const decoded = () => {
    if (cpu) decodedAt = readThreadCpuUs();
  };
  const done = () => {
    if (!cpu) return;
    const end = readThreadCpuUs();
    cpu.decodeUs += decodedAt - started;
    cpu.normalizeUs += end - decodedAt;
  };
  if (signal === 'traces') {
    const request = format === 'protobuf' ? decodeTraceRequestProtobuf(body) : decodeTraceRequestJson(text());
    decoded();
    const n = normalizeTraceRequest(request, settings);
    done();
    return { spans: n.rows, metrics: [], rejected: n.rejected, problems: n.problems };
  }
  const request =
    format === 'protobuf' ? decodeMetricsRequestProtobuf(body) : decodeMetricsRequestJson(text());
  decoded();
  const n = normalizeMetricsRequest(request, settings.aliases, settings.identity);
  done();
  return { spans: [], metrics: n.rows, rejected: n.rejected, problems: n.problems };
}
