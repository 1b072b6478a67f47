import type { GovernorConfig, HopRuleConfig } from '@governor/conventions';
import {
  type ColumnBatch,
  type HopClassifier,
  type FleetIdentityOptions,
  METRIC_POINT_COLUMNS,
  type MetricPointRow,
  SPAN_COLUMNS,
  type SpanRow,
  createColumnEncoder,
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
import { SELF_SERVICE_NAME } from '../observability/self-service-name.ts';
import { rejectFutureRows } from './reject-future-rows.ts';

// decode → validate/normalize → the event-time guard → rows laid out as columns for the appender,
// for one request body: pure, and the same on the main thread and in the decode workers. Throws
// OtlpDecodeError for a body that is not an export request.

export type OtlpFormat = 'protobuf' | 'json';
export type OtlpSignal = 'traces' | 'metrics';

export interface DecodedBody {
  /** The accepted spans and points as the appender takes them (ColumnBatch, @governor/otlp). */
  spans: ColumnBatch[];
  metrics: ColumnBatch[];
  spanCount: number;
  pointCount: number;
  /** Rows refused by validation or by the event-time guard. */
  rejected: number;
  /** Of `rejected`, the rows dated past the accepted event time (rejectFutureRows). */
  futureRejected: number;
  problems: string[];
  /** Every span is Governor's own (service.name governor): its export is not traced again. */
  ownBatch: boolean;
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

/** CPU microseconds of the decoding thread spent on each step (see IngestCpu); encoding counts as transfer. */
export interface DecodeCpu {
  decodeUs: number;
  normalizeUs: number;
  transferUs: number;
}

const encodeSpans = createColumnEncoder<SpanRow>(SPAN_COLUMNS);
const encodeMetricPoints = createColumnEncoder<MetricPointRow>(METRIC_POINT_COLUMNS);

/** `maxEventNs`: rows dated later are refused (maxAcceptedEventNs of the server clock at intake). */
export function decodeOtlpBody(
  signal: OtlpSignal,
  body: Uint8Array,
  format: OtlpFormat,
  settings: DecodeSettings,
  maxEventNs: bigint,
  cpu?: DecodeCpu,
): DecodedBody {
  const text = () => Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  const started = cpu ? readThreadCpuUs() : 0;
  let decodedAt = 0;
  const decoded = () => {
    if (cpu) decodedAt = readThreadCpuUs();
  };
  const finish = (
    spans: SpanRow[],
    metrics: MetricPointRow[],
    normalized: { rejected: number; problems: string[] },
  ): DecodedBody => {
    const guard = rejectFutureRows(spans, metrics, maxEventNs);
    const normalizedAt = cpu ? readThreadCpuUs() : 0;
    const result: DecodedBody = {
      spans: encodeSpans(guard.spans),
      metrics: encodeMetricPoints(guard.metrics),
      spanCount: guard.spans.length,
      pointCount: guard.metrics.length,
      rejected: normalized.rejected + guard.rejected,
      futureRejected: guard.rejected,
      problems: guard.problem ? [...normalized.problems, guard.problem] : normalized.problems,
      ownBatch: guard.spans.length > 0 && guard.spans.every((s) => s.service === SELF_SERVICE_NAME),
    };
    if (cpu) {
      cpu.decodeUs += decodedAt - started;
      cpu.normalizeUs += normalizedAt - decodedAt;
      cpu.transferUs += readThreadCpuUs() - normalizedAt;
    }
    return result;
  };
  if (signal === 'traces') {
    const request = format === 'protobuf' ? decodeTraceRequestProtobuf(body) : decodeTraceRequestJson(text());
    decoded();
    const n = normalizeTraceRequest(request, settings);
    return finish(n.rows, [], n);
  }
  const request =
    format === 'protobuf' ? decodeMetricsRequestProtobuf(body) : decodeMetricsRequestJson(text());
  decoded();
  const n = normalizeMetricsRequest(request, settings.aliases, settings.identity);
  return finish([], n.rows, n);
}
