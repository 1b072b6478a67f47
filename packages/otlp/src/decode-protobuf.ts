import { setAttribute } from './attribute-values.ts';
import { ProtobufReader } from './protobuf-reader.ts';
import {
  type AttributeValue,
  type Attributes,
  type DecodedDataPoint,
  type DecodedEvent,
  type DecodedMetric,
  type DecodedMetricsRequest,
  type DecodedResourceMetrics,
  type DecodedResourceSpans,
  type DecodedScope,
  type DecodedScopeMetrics,
  type DecodedScopeSpans,
  type DecodedSpan,
  type DecodedTraceRequest,
  type MetricType,
  OtlpDecodeError,
} from './types.ts';

// Field numbers follow opentelemetry-proto v1 (collector/trace/v1, collector/metrics/v1). Each
// switch is over the whole field key, `(field << 3) | wireType`; a known field with an unexpected
// wire type is skipped like an unknown one.

const MAX_NESTING = 32;

const LEN = 2;
const I64 = 1;
const VARINT = 0;
const key = (field: number, wire: number) => (field << 3) | wire;

/** Reads one length-delimited sub-message with `read`, leaving the reader just past it. */
function nested<T>(r: ProtobufReader, read: (r: ProtobufReader) => T): T {
  const outer = r.enter();
  const value = read(r);
  r.leave(outer);
  return value;
}

export function decodeTraceRequestProtobuf(buf: Uint8Array): DecodedTraceRequest {
  const r = new ProtobufReader(buf);
  const resourceSpans: DecodedResourceSpans[] = [];
  while (!r.done()) {
    const k = r.tag();
    if (k === key(1, LEN)) resourceSpans.push(nested(r, readResourceSpans));
    else r.skip(k & 7);
  }
  return { resourceSpans };
}

export function decodeMetricsRequestProtobuf(buf: Uint8Array): DecodedMetricsRequest {
  const r = new ProtobufReader(buf);
  const resourceMetrics: DecodedResourceMetrics[] = [];
  while (!r.done()) {
    const k = r.tag();
    if (k === key(1, LEN)) resourceMetrics.push(nested(r, readResourceMetrics));
    else r.skip(k & 7);
  }
  return { resourceMetrics };
}

function readResource(r: ProtobufReader): Attributes {
  const attributes: Attributes = {};
  while (!r.done()) {
    const k = r.tag();
    if (k === key(1, LEN)) readKeyValue(r, attributes, 0);
    else r.skip(k & 7);
  }
  return attributes;
}

function readScope(r: ProtobufReader): DecodedScope {
  const scope: DecodedScope = { name: '', version: '' };
  while (!r.done()) {
    const k = r.tag();
    if (k === key(1, LEN)) scope.name = r.string();
    else if (k === key(2, LEN)) scope.version = r.string();
    else r.skip(k & 7);
  }
  return scope;
}

function readResourceSpans(r: ProtobufReader): DecodedResourceSpans {
  const out: DecodedResourceSpans = { resource: {}, scopeSpans: [] };
  while (!r.done()) {
    const k = r.tag();
    if (k === key(1, LEN)) out.resource = nested(r, readResource);
    else if (k === key(2, LEN)) out.scopeSpans.push(nested(r, readScopeSpans));
    else r.skip(k & 7);
  }
  return out;
}

function readScopeSpans(r: ProtobufReader): DecodedScopeSpans {
  const out: DecodedScopeSpans = { scope: { name: '', version: '' }, spans: [] };
  while (!r.done()) {
    const k = r.tag();
    if (k === key(1, LEN)) out.scope = nested(r, readScope);
    else if (k === key(2, LEN)) out.spans.push(nested(r, readSpan));
    else r.skip(k & 7);
  }
  return out;
}

function readSpan(r: ProtobufReader): DecodedSpan {
  const span: DecodedSpan = {
    traceId: '',
    spanId: '',
    parentSpanId: '',
    traceState: '',
    name: '',
    kind: 0,
    startNs: 0n,
    endNs: 0n,
    attributes: {},
    events: [],
    linkCount: 0,
    statusCode: 0,
    statusMessage: '',
  };
  while (!r.done()) {
    const k = r.tag();
    switch (k) {
      case key(1, LEN):
        span.traceId = r.hex();
        break;
      case key(2, LEN):
        span.spanId = r.hex();
        break;
      case key(3, LEN):
        span.traceState = r.string();
        break;
      case key(4, LEN):
        span.parentSpanId = r.hex();
        break;
      case key(5, LEN):
        span.name = r.string();
        break;
      case key(6, VARINT):
        span.kind = r.varint32();
        break;
      case key(7, I64):
        span.startNs = r.fixed64();
        break;
      case key(8, I64):
        span.endNs = r.fixed64();
        break;
      case key(9, LEN):
        readKeyValue(r, span.attributes, 0);
        break;
      case key(11, LEN):
        span.events.push(nested(r, readEvent));
        break;
      case key(13, LEN):
        r.skip(LEN);
        span.linkCount++;
        break;
      case key(15, LEN): {
        const outer = r.enter();
        readStatus(r, span);
        r.leave(outer);
        break;
      }
      default:
        r.skip(k & 7);
    }
  }
  return span;
}

function readEvent(r: ProtobufReader): DecodedEvent {
  const event: DecodedEvent = { timeNs: 0n, name: '', attributes: {} };
  while (!r.done()) {
    const k = r.tag();
    if (k === key(1, I64)) event.timeNs = r.fixed64();
    else if (k === key(2, LEN)) event.name = r.string();
    else if (k === key(3, LEN)) readKeyValue(r, event.attributes, 0);
    else r.skip(k & 7);
  }
  return event;
}

function readStatus(r: ProtobufReader, span: DecodedSpan): void {
  while (!r.done()) {
    const k = r.tag();
    if (k === key(2, LEN)) span.statusMessage = r.string();
    else if (k === key(3, VARINT)) span.statusCode = r.varint32();
    else r.skip(k & 7);
  }
}

/** Reads one KeyValue sub-message (the reader is positioned at its length) into `into`. */
function readKeyValue(r: ProtobufReader, into: Record<string, AttributeValue>, depth: number): void {
  const outer = r.enter();
  let name = '';
  let value: AttributeValue = null;
  while (!r.done()) {
    const k = r.tag();
    if (k === key(1, LEN)) name = r.string();
    else if (k === key(2, LEN)) {
      const anyOuter = r.enter();
      value = readAnyValue(r, depth + 1);
      r.leave(anyOuter);
    } else r.skip(k & 7);
  }
  r.leave(outer);
  // Plain assignment on the hot path; only a key named __proto__ needs defineProperty.
  if (name === '__proto__') setAttribute(into, name, value);
  else into[name] = value;
}

function readAnyValue(r: ProtobufReader, depth: number): AttributeValue {
  if (depth > MAX_NESTING)
    throw new OtlpDecodeError(`attribute values nested deeper than ${MAX_NESTING} levels`);
  let value: AttributeValue = null;
  while (!r.done()) {
    const k = r.tag();
    switch (k) {
      case key(1, LEN):
        value = r.string();
        break;
      case key(2, VARINT):
        value = r.varint32() !== 0;
        break;
      case key(3, VARINT):
        value = r.int64();
        break;
      case key(4, I64):
        value = r.double();
        break;
      case key(5, LEN): {
        const outer = r.enter();
        const values: AttributeValue[] = [];
        while (!r.done()) {
          const ak = r.tag();
          if (ak === key(1, LEN)) {
            const itemOuter = r.enter();
            values.push(readAnyValue(r, depth + 1));
            r.leave(itemOuter);
          } else r.skip(ak & 7);
        }
        r.leave(outer);
        value = values;
        break;
      }
      case key(6, LEN): {
        const outer = r.enter();
        const obj: Record<string, AttributeValue> = {};
        while (!r.done()) {
          const kk = r.tag();
          if (kk === key(1, LEN)) readKeyValue(r, obj, depth + 1);
          else r.skip(kk & 7);
        }
        r.leave(outer);
        value = obj;
        break;
      }
      case key(7, LEN):
        value = r.base64();
        break;
      default:
        r.skip(k & 7);
    }
  }
  return value;
}

function readResourceMetrics(r: ProtobufReader): DecodedResourceMetrics {
  const out: DecodedResourceMetrics = { resource: {}, scopeMetrics: [] };
  while (!r.done()) {
    const k = r.tag();
    if (k === key(1, LEN)) out.resource = nested(r, readResource);
    else if (k === key(2, LEN)) out.scopeMetrics.push(nested(r, readScopeMetrics));
    else r.skip(k & 7);
  }
  return out;
}

function readScopeMetrics(r: ProtobufReader): DecodedScopeMetrics {
  const out: DecodedScopeMetrics = { scope: { name: '', version: '' }, metrics: [] };
  while (!r.done()) {
    const k = r.tag();
    if (k === key(1, LEN)) out.scope = nested(r, readScope);
    else if (k === key(2, LEN)) out.metrics.push(nested(r, readMetric));
    else r.skip(k & 7);
  }
  return out;
}

const METRIC_DATA_FIELDS: Record<number, MetricType> = {
  5: 'gauge',
  7: 'sum',
  9: 'histogram',
  10: 'exponential_histogram',
  11: 'summary',
};

function readMetric(r: ProtobufReader): DecodedMetric {
  const metric: DecodedMetric = {
    name: '',
    description: '',
    unit: '',
    type: null,
    isMonotonic: false,
    temporality: 0,
    points: [],
  };
  while (!r.done()) {
    const k = r.tag();
    const type = METRIC_DATA_FIELDS[k >>> 3];
    if (k === key(1, LEN)) metric.name = r.string();
    else if (k === key(2, LEN)) metric.description = r.string();
    else if (k === key(3, LEN)) metric.unit = r.string();
    else if (type && (k & 7) === LEN) {
      metric.type = type;
      const outer = r.enter();
      readMetricData(r, metric, type);
      r.leave(outer);
    } else r.skip(k & 7);
  }
  return metric;
}

function readMetricData(r: ProtobufReader, metric: DecodedMetric, type: MetricType): void {
  while (!r.done()) {
    const k = r.tag();
    if (k === key(1, LEN)) {
      const outer = r.enter();
      metric.points.push(readDataPoint(r, type));
      r.leave(outer);
    } else if (k === key(2, VARINT) && type !== 'gauge' && type !== 'summary')
      metric.temporality = r.varint32();
    else if (k === key(3, VARINT) && type === 'sum') metric.isMonotonic = r.varint32() !== 0;
    else r.skip(k & 7);
  }
}

function emptyPoint(): DecodedDataPoint {
  return {
    attributes: {},
    startNs: 0n,
    timeNs: 0n,
    value: null,
    count: null,
    sum: null,
    min: null,
    max: null,
    bucketCounts: null,
    explicitBounds: null,
    quantiles: null,
  };
}

function readDataPoint(r: ProtobufReader, type: MetricType): DecodedDataPoint {
  const p = emptyPoint();
  const attrField = type === 'histogram' ? 9 : type === 'exponential_histogram' ? 1 : 7;
  while (!r.done()) {
    const k = r.tag();
    const field = k >>> 3;
    const wire = k & 7;
    if (field === attrField && wire === LEN) {
      readKeyValue(r, p.attributes, 0);
      continue;
    }
    if (k === key(2, I64)) {
      p.startNs = r.fixed64();
      continue;
    }
    if (k === key(3, I64)) {
      p.timeNs = r.fixed64();
      continue;
    }
    if (type === 'gauge' || type === 'sum') {
      if (k === key(4, I64)) p.value = r.double();
      else if (k === key(6, I64)) p.value = Number(r.sfixed64());
      else r.skip(wire);
      continue;
    }
    if (k === key(4, I64)) p.count = Number(r.fixed64());
    else if (k === key(5, I64)) p.sum = r.double();
    else if (type === 'histogram' && field === 6) p.bucketCounts = readPackedFixed64(r, wire, p.bucketCounts);
    else if (type === 'histogram' && field === 7)
      p.explicitBounds = readPackedDouble(r, wire, p.explicitBounds);
    else if (type === 'histogram' && k === key(11, I64)) p.min = r.double();
    else if (type === 'histogram' && k === key(12, I64)) p.max = r.double();
    else if (type === 'exponential_histogram' && k === key(12, I64)) p.min = r.double();
    else if (type === 'exponential_histogram' && k === key(13, I64)) p.max = r.double();
    else if (type === 'summary' && k === key(6, LEN)) {
      const outer = r.enter();
      const q = { quantile: 0, value: 0 };
      while (!r.done()) {
        const qk = r.tag();
        if (qk === key(1, I64)) q.quantile = r.double();
        else if (qk === key(2, I64)) q.value = r.double();
        else r.skip(qk & 7);
      }
      r.leave(outer);
      p.quantiles ??= [];
      p.quantiles.push(q);
    } else r.skip(wire);
  }
  return p;
}

function readPackedFixed64(r: ProtobufReader, wire: number, into: number[] | null): number[] {
  const out = into ?? [];
  if (wire === I64) {
    out.push(Number(r.fixed64()));
    return out;
  }
  if (wire !== LEN) {
    r.skip(wire);
    return out;
  }
  const outer = r.enter();
  while (!r.done()) out.push(Number(r.fixed64()));
  r.leave(outer);
  return out;
}

function readPackedDouble(r: ProtobufReader, wire: number, into: number[] | null): number[] {
  const out = into ?? [];
  if (wire === I64) {
    out.push(r.double());
    return out;
  }
  if (wire !== LEN) {
    r.skip(wire);
    return out;
  }
  const outer = r.enter();
  while (!r.done()) out.push(r.double());
  r.leave(outer);
  return out;
}
