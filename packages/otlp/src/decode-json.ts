import { setAttribute } from './attribute-values.ts';
import {
  type AttributeValue,
  type Attributes,
  type DecodedDataPoint,
  type DecodedEvent,
  type DecodedMetric,
  type DecodedMetricsRequest,
  type DecodedScope,
  type DecodedSpan,
  type DecodedTraceRequest,
  type MetricType,
  OtlpDecodeError,
} from './types.ts';

// OTLP/JSON (protobuf JSON mapping): lowerCamelCase keys (snake_case accepted too), hex ids,
// integer or named enums, 64-bit integers as strings or numbers. Unknown fields are ignored.
// A structurally wrong body throws OtlpDecodeError; a wrong value inside one span only makes that
// span invalid, so validation can reject it while its neighbours are kept.

type Json = Record<string, unknown>;

const MAX_NESTING = 32;

export function decodeTraceRequestJson(text: string): DecodedTraceRequest {
  const root = parseObject(text);
  const resourceSpans = arrayField(root, 'resourceSpans', 'resource_spans', 'request');
  return {
    resourceSpans: resourceSpans.map((rs, i) => {
      const obj = asObject(rs, `resourceSpans[${i}]`);
      const scopes = [
        ...arrayField(obj, 'scopeSpans', 'scope_spans', `resourceSpans[${i}]`),
        ...arrayField(
          obj,
          'instrumentationLibrarySpans',
          'instrumentation_library_spans',
          `resourceSpans[${i}]`,
        ),
      ];
      return {
        resource: readResource(obj),
        scopeSpans: scopes.map((ss, j) => {
          const scopeObj = asObject(ss, `resourceSpans[${i}].scopeSpans[${j}]`);
          return {
            scope: readScope(scopeObj),
            spans: arrayField(scopeObj, 'spans', 'spans', `scopeSpans[${j}]`).map((s) => readSpan(s)),
          };
        }),
      };
    }),
  };
}

export function decodeMetricsRequestJson(text: string): DecodedMetricsRequest {
  const root = parseObject(text);
  const resourceMetrics = arrayField(root, 'resourceMetrics', 'resource_metrics', 'request');
  return {
    resourceMetrics: resourceMetrics.map((rm, i) => {
      const obj = asObject(rm, `resourceMetrics[${i}]`);
      const scopes = [
        ...arrayField(obj, 'scopeMetrics', 'scope_metrics', `resourceMetrics[${i}]`),
        ...arrayField(
          obj,
          'instrumentationLibraryMetrics',
          'instrumentation_library_metrics',
          `resourceMetrics[${i}]`,
        ),
      ];
      return {
        resource: readResource(obj),
        scopeMetrics: scopes.map((sm, j) => {
          const scopeObj = asObject(sm, `resourceMetrics[${i}].scopeMetrics[${j}]`);
          return {
            scope: readScope(scopeObj),
            metrics: arrayField(scopeObj, 'metrics', 'metrics', `scopeMetrics[${j}]`).map((m, k) =>
              readMetric(asObject(m, `metrics[${k}]`)),
            ),
          };
        }),
      };
    }),
  };
}

function parseObject(text: string): Json {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new OtlpDecodeError(`request body is not valid JSON: ${(error as Error).message}`);
  }
  return asObject(parsed, 'request');
}

function asObject(value: unknown, where: string): Json {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new OtlpDecodeError(`${where} must be a JSON object`);
  }
  return value as Json;
}

function field(obj: Json, camel: string, snake: string): unknown {
  const v = obj[camel];
  return v === undefined ? obj[snake] : v;
}

function arrayField(obj: Json, camel: string, snake: string, where: string): unknown[] {
  const v = field(obj, camel, snake);
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new OtlpDecodeError(`${where}.${camel} must be an array`);
  return v;
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function readResource(obj: Json): Attributes {
  const resource = field(obj, 'resource', 'resource');
  if (!resource || typeof resource !== 'object') return {};
  return readAttributes((resource as Json).attributes, 0);
}

function readScope(obj: Json): DecodedScope {
  const scope =
    field(obj, 'scope', 'scope') ?? field(obj, 'instrumentationLibrary', 'instrumentation_library');
  if (!scope || typeof scope !== 'object') return { name: '', version: '' };
  return { name: str((scope as Json).name), version: str((scope as Json).version) };
}

function readAttributes(list: unknown, depth: number): Attributes {
  const out: Attributes = {};
  if (!Array.isArray(list)) return out;
  for (const kv of list) {
    if (!kv || typeof kv !== 'object') continue;
    const key = (kv as Json).key;
    if (typeof key !== 'string') continue;
    setAttribute(out, key, readAnyValue((kv as Json).value, depth + 1));
  }
  return out;
}

function readAnyValue(value: unknown, depth: number): AttributeValue {
  if (depth > MAX_NESTING)
    throw new OtlpDecodeError(`attribute values nested deeper than ${MAX_NESTING} levels`);
  if (!value || typeof value !== 'object') return null;
  const v = value as Json;
  if ('stringValue' in v || 'string_value' in v) return str(field(v, 'stringValue', 'string_value'));
  if ('boolValue' in v || 'bool_value' in v) return field(v, 'boolValue', 'bool_value') === true;
  if ('intValue' in v || 'int_value' in v) return readInt(field(v, 'intValue', 'int_value'));
  if ('doubleValue' in v || 'double_value' in v) {
    const d = field(v, 'doubleValue', 'double_value');
    return typeof d === 'number' ? d : typeof d === 'string' ? Number(d) : null;
  }
  if ('arrayValue' in v || 'array_value' in v) {
    const arr = field(v, 'arrayValue', 'array_value') as Json | null;
    const values = arr && Array.isArray(arr.values) ? arr.values : [];
    return values.map((x) => readAnyValue(x, depth + 1));
  }
  if ('kvlistValue' in v || 'kvlist_value' in v) {
    const kv = field(v, 'kvlistValue', 'kvlist_value') as Json | null;
    return readAttributes(kv?.values, depth + 1);
  }
  if ('bytesValue' in v || 'bytes_value' in v) return str(field(v, 'bytesValue', 'bytes_value'));
  return null;
}

function readInt(value: unknown): number | string | null {
  if (typeof value === 'number') return Number.isFinite(value) ? Math.trunc(value) : null;
  if (typeof value === 'string' && /^-?\d+$/.test(value)) {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : value;
  }
  return null;
}

/** Nanosecond timestamp from a decimal string or number; -1n marks an unreadable value. */
function readNs(value: unknown): bigint {
  if (value === undefined || value === null) return 0n;
  if (typeof value === 'string' && /^\d+$/.test(value)) return BigInt(value);
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return BigInt(Math.round(value));
  return -1n;
}

const HEX_ID = /^[0-9a-fA-F]*$/;

/** Ids are hex in OTLP/JSON; some emitters send protobuf-JSON base64 instead — accept both. */
function readId(value: unknown, bytes: number): string {
  if (typeof value !== 'string' || value === '') return '';
  if (value.length === bytes * 2 && HEX_ID.test(value)) return value.toLowerCase();
  if (value.length === Math.ceil(bytes / 3) * 4) {
    const decoded = Buffer.from(value, 'base64');
    if (decoded.length === bytes) return decoded.toString('hex');
  }
  return 'invalid';
}

const SPAN_KINDS: Record<string, number> = {
  SPAN_KIND_UNSPECIFIED: 0,
  SPAN_KIND_INTERNAL: 1,
  SPAN_KIND_SERVER: 2,
  SPAN_KIND_CLIENT: 3,
  SPAN_KIND_PRODUCER: 4,
  SPAN_KIND_CONSUMER: 5,
};
const STATUS_CODES: Record<string, number> = {
  STATUS_CODE_UNSET: 0,
  STATUS_CODE_OK: 1,
  STATUS_CODE_ERROR: 2,
};

function readEnum(value: unknown, names: Record<string, number>): number {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string') return names[value] ?? 0;
  return 0;
}

function readSpan(value: unknown): DecodedSpan {
  const s = (value && typeof value === 'object' ? value : {}) as Json;
  const status = (field(s, 'status', 'status') ?? {}) as Json;
  const events = field(s, 'events', 'events');
  const links = field(s, 'links', 'links');
  return {
    traceId: readId(field(s, 'traceId', 'trace_id'), 16),
    spanId: readId(field(s, 'spanId', 'span_id'), 8),
    parentSpanId: readId(field(s, 'parentSpanId', 'parent_span_id'), 8),
    traceState: str(field(s, 'traceState', 'trace_state')),
    name: str(s.name),
    kind: readEnum(s.kind, SPAN_KINDS),
    startNs: readNs(field(s, 'startTimeUnixNano', 'start_time_unix_nano')),
    endNs: readNs(field(s, 'endTimeUnixNano', 'end_time_unix_nano')),
    attributes: readAttributes(s.attributes, 0),
    events: Array.isArray(events) ? events.map(readEvent) : [],
    linkCount: Array.isArray(links) ? links.length : 0,
    statusCode: readEnum(status.code, STATUS_CODES),
    statusMessage: str(status.message),
  };
}

function readEvent(value: unknown): DecodedEvent {
  const e = (value && typeof value === 'object' ? value : {}) as Json;
  return {
    timeNs: readNs(field(e, 'timeUnixNano', 'time_unix_nano')),
    name: str(e.name),
    attributes: readAttributes(e.attributes, 0),
  };
}

const METRIC_TYPES: [string, string, MetricType][] = [
  ['gauge', 'gauge', 'gauge'],
  ['sum', 'sum', 'sum'],
  ['histogram', 'histogram', 'histogram'],
  ['exponentialHistogram', 'exponential_histogram', 'exponential_histogram'],
  ['summary', 'summary', 'summary'],
];

function readMetric(m: Json): DecodedMetric {
  const metric: DecodedMetric = {
    name: str(m.name),
    description: str(m.description),
    unit: str(m.unit),
    type: null,
    isMonotonic: false,
    temporality: 0,
    points: [],
  };
  for (const [camel, snake, type] of METRIC_TYPES) {
    const data = field(m, camel, snake);
    if (!data || typeof data !== 'object') continue;
    const d = data as Json;
    metric.type = type;
    metric.temporality = readEnum(field(d, 'aggregationTemporality', 'aggregation_temporality'), {
      AGGREGATION_TEMPORALITY_UNSPECIFIED: 0,
      AGGREGATION_TEMPORALITY_DELTA: 1,
      AGGREGATION_TEMPORALITY_CUMULATIVE: 2,
    });
    metric.isMonotonic = field(d, 'isMonotonic', 'is_monotonic') === true;
    const points = field(d, 'dataPoints', 'data_points');
    metric.points = Array.isArray(points) ? points.map((p) => readPoint(p, type)) : [];
    break;
  }
  return metric;
}

function num(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)))
    return Number(value);
  return null;
}

function readPoint(value: unknown, type: MetricType): DecodedDataPoint {
  const p = (value && typeof value === 'object' ? value : {}) as Json;
  const asDouble = num(field(p, 'asDouble', 'as_double'));
  const asInt = num(field(p, 'asInt', 'as_int'));
  const buckets = field(p, 'bucketCounts', 'bucket_counts');
  const bounds = field(p, 'explicitBounds', 'explicit_bounds');
  const quantiles = field(p, 'quantileValues', 'quantile_values');
  const isNumber = type === 'gauge' || type === 'sum';
  return {
    attributes: readAttributes(p.attributes, 0),
    startNs: readNs(field(p, 'startTimeUnixNano', 'start_time_unix_nano')),
    timeNs: readNs(field(p, 'timeUnixNano', 'time_unix_nano')),
    value: isNumber ? (asDouble ?? asInt) : null,
    count: isNumber ? null : num(p.count),
    sum: isNumber ? null : num(p.sum),
    min: num(p.min),
    max: num(p.max),
    bucketCounts: Array.isArray(buckets) ? buckets.map((b) => num(b) ?? 0) : null,
    explicitBounds: Array.isArray(bounds) ? bounds.map((b) => num(b) ?? 0) : null,
    quantiles: Array.isArray(quantiles)
      ? quantiles.map((q) => ({
          quantile: num((q as Json)?.quantile) ?? 0,
          value: num((q as Json)?.value) ?? 0,
        }))
      : null,
  };
}
