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

// Field numbers follow opentelemetry-proto v1 (collector/trace/v1, collector/metrics/v1).

const MAX_NESTING = 32;

export function decodeTraceRequestProtobuf(buf: Uint8Array): DecodedTraceRequest {
  const r = new ProtobufReader(buf);
  const resourceSpans: DecodedResourceSpans[] = [];
  while (!r.done()) {
    const [field, wire] = r.tag();
    if (field === 1 && wire === 2) resourceSpans.push(readResourceSpans(r.sub()));
    else r.skip(wire);
  }
  return { resourceSpans };
}

export function decodeMetricsRequestProtobuf(buf: Uint8Array): DecodedMetricsRequest {
  const r = new ProtobufReader(buf);
  const resourceMetrics: DecodedResourceMetrics[] = [];
  while (!r.done()) {
    const [field, wire] = r.tag();
    if (field === 1 && wire === 2) resourceMetrics.push(readResourceMetrics(r.sub()));
    else r.skip(wire);
  }
  return { resourceMetrics };
}

function readResource(r: ProtobufReader): Attributes {
  const attributes: Attributes = {};
  while (!r.done()) {
    const [field, wire] = r.tag();
    if (field === 1 && wire === 2) readKeyValue(r.sub(), attributes, 0);
    else r.skip(wire);
  }
  return attributes;
}

function readScope(r: ProtobufReader): DecodedScope {
  const scope: DecodedScope = { name: '', version: '' };
  while (!r.done()) {
    const [field, wire] = r.tag();
    if (field === 1 && wire === 2) scope.name = r.string();
    else if (field === 2 && wire === 2) scope.version = r.string();
    else r.skip(wire);
  }
  return scope;
}

function readResourceSpans(r: ProtobufReader): DecodedResourceSpans {
  const out: DecodedResourceSpans = { resource: {}, scopeSpans: [] };
  while (!r.done()) {
    const [field, wire] = r.tag();
    if (field === 1 && wire === 2) out.resource = readResource(r.sub());
    else if (field === 2 && wire === 2) out.scopeSpans.push(readScopeSpans(r.sub()));
    else r.skip(wire);
  }
  return out;
}

function readScopeSpans(r: ProtobufReader): DecodedScopeSpans {
  const out: DecodedScopeSpans = { scope: { name: '', version: '' }, spans: [] };
  while (!r.done()) {
    const [field, wire] = r.tag();
    if (field === 1 && wire === 2) out.scope = readScope(r.sub());
    else if (field === 2 && wire === 2) out.spans.push(readSpan(r.sub()));
    else r.skip(wire);
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
    const [field, wire] = r.tag();
    switch (field) {
      case 1:
        if (wire !== 2) break;
        span.traceId = r.hex();
        continue;
      case 2:
        if (wire !== 2) break;
        span.spanId = r.hex();
        continue;
      case 3:
        if (wire !== 2) break;
        span.traceState = r.string();
        continue;
      case 4:
        if (wire !== 2) break;
        span.parentSpanId = r.hex();
        continue;
      case 5:
        if (wire !== 2) break;
        span.name = r.string();
        continue;
      case 6:
        if (wire !== 0) break;
        span.kind = r.varint32();
        continue;
      case 7:
        if (wire !== 1) break;
        span.startNs = r.fixed64();
        continue;
      case 8:
        if (wire !== 1) break;
        span.endNs = r.fixed64();
        continue;
      case 9:
        if (wire !== 2) break;
        readKeyValue(r.sub(), span.attributes, 0);
        continue;
      case 11:
        if (wire !== 2) break;
        span.events.push(readEvent(r.sub()));
        continue;
      case 13:
        if (wire !== 2) break;
        r.skip(2);
        span.linkCount++;
        continue;
      case 15:
        if (wire !== 2) break;
        readStatus(r.sub(), span);
        continue;
    }
    r.skip(wire);
  }
  return span;
}

function readEvent(r: ProtobufReader): DecodedEvent {
  const event: DecodedEvent = { timeNs: 0n, name: '', attributes: {} };
  while (!r.done()) {
    const [field, wire] = r.tag();
    if (field === 1 && wire === 1) event.timeNs = r.fixed64();
    else if (field === 2 && wire === 2) event.name = r.string();
    else if (field === 3 && wire === 2) readKeyValue(r.sub(), event.attributes, 0);
    else r.skip(wire);
  }
  return event;
}

function readStatus(r: ProtobufReader, span: DecodedSpan): void {
  while (!r.done()) {
    const [field, wire] = r.tag();
    if (field === 2 && wire === 2) span.statusMessage = r.string();
    else if (field === 3 && wire === 0) span.statusCode = r.varint32();
    else r.skip(wire);
  }
}

function readKeyValue(r: ProtobufReader, into: Record<string, AttributeValue>, depth: number): void {
  let key = '';
  let value: AttributeValue = null;
  while (!r.done()) {
    const [field, wire] = r.tag();
    if (field === 1 && wire === 2) key = r.string();
    else if (field === 2 && wire === 2) value = readAnyValue(r.sub(), depth + 1);
    else r.skip(wire);
  }
  into[key] = value;
}

function readAnyValue(r: ProtobufReader, depth: number): AttributeValue {
  if (depth > MAX_NESTING)
    throw new OtlpDecodeError(`attribute values nested deeper than ${MAX_NESTING} levels`);
  let value: AttributeValue = null;
  while (!r.done()) {
    const [field, wire] = r.tag();
    if (field === 1 && wire === 2) value = r.string();
    else if (field === 2 && wire === 0) value = r.varint32() !== 0;
    else if (field === 3 && wire === 0) value = int64ToValue(r.varint64());
    else if (field === 4 && wire === 1) value = r.double();
    else if (field === 5 && wire === 2) {
      const sub = r.sub();
      const values: AttributeValue[] = [];
      while (!sub.done()) {
        const [f, w] = sub.tag();
        if (f === 1 && w === 2) values.push(readAnyValue(sub.sub(), depth + 1));
        else sub.skip(w);
      }
      value = values;
    } else if (field === 6 && wire === 2) {
      const sub = r.sub();
      const obj: Record<string, AttributeValue> = {};
      while (!sub.done()) {
        const [f, w] = sub.tag();
        if (f === 1 && w === 2) readKeyValue(sub.sub(), obj, depth + 1);
        else sub.skip(w);
      }
      value = obj;
    } else if (field === 7 && wire === 2) value = r.base64();
    else r.skip(wire);
  }
  return value;
}

function int64ToValue(v: bigint): number | string {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(v)
    : v.toString();
}

function readResourceMetrics(r: ProtobufReader): DecodedResourceMetrics {
  const out: DecodedResourceMetrics = { resource: {}, scopeMetrics: [] };
  while (!r.done()) {
    const [field, wire] = r.tag();
    if (field === 1 && wire === 2) out.resource = readResource(r.sub());
    else if (field === 2 && wire === 2) out.scopeMetrics.push(readScopeMetrics(r.sub()));
    else r.skip(wire);
  }
  return out;
}

function readScopeMetrics(r: ProtobufReader): DecodedScopeMetrics {
  const out: DecodedScopeMetrics = { scope: { name: '', version: '' }, metrics: [] };
  while (!r.done()) {
    const [field, wire] = r.tag();
    if (field === 1 && wire === 2) out.scope = readScope(r.sub());
    else if (field === 2 && wire === 2) out.metrics.push(readMetric(r.sub()));
    else r.skip(wire);
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
    const [field, wire] = r.tag();
    const type = METRIC_DATA_FIELDS[field];
    if (field === 1 && wire === 2) metric.name = r.string();
    else if (field === 2 && wire === 2) metric.description = r.string();
    else if (field === 3 && wire === 2) metric.unit = r.string();
    else if (type && wire === 2) {
      metric.type = type;
      readMetricData(r.sub(), metric, type);
    } else r.skip(wire);
  }
  return metric;
}

function readMetricData(r: ProtobufReader, metric: DecodedMetric, type: MetricType): void {
  while (!r.done()) {
    const [field, wire] = r.tag();
    if (field === 1 && wire === 2) metric.points.push(readDataPoint(r.sub(), type));
    else if (field === 2 && wire === 0 && type !== 'gauge' && type !== 'summary')
      metric.temporality = r.varint32();
    else if (field === 3 && wire === 0 && type === 'sum') metric.isMonotonic = r.varint32() !== 0;
    else r.skip(wire);
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
    const [field, wire] = r.tag();
    if (field === attrField && wire === 2) {
      readKeyValue(r.sub(), p.attributes, 0);
      continue;
    }
    if (field === 2 && wire === 1) {
      p.startNs = r.fixed64();
      continue;
    }
    if (field === 3 && wire === 1) {
      p.timeNs = r.fixed64();
      continue;
    }
    if (type === 'gauge' || type === 'sum') {
      if (field === 4 && wire === 1) p.value = r.double();
      else if (field === 6 && wire === 1) p.value = Number(r.sfixed64());
      else r.skip(wire);
      continue;
    }
    if (field === 4 && wire === 1) p.count = Number(r.fixed64());
    else if (field === 5 && wire === 1) p.sum = r.double();
    else if (type === 'histogram' && field === 6) p.bucketCounts = readPackedFixed64(r, wire, p.bucketCounts);
    else if (type === 'histogram' && field === 7)
      p.explicitBounds = readPackedDouble(r, wire, p.explicitBounds);
    else if (type === 'histogram' && field === 11 && wire === 1) p.min = r.double();
    else if (type === 'histogram' && field === 12 && wire === 1) p.max = r.double();
    else if (type === 'exponential_histogram' && field === 12 && wire === 1) p.min = r.double();
    else if (type === 'exponential_histogram' && field === 13 && wire === 1) p.max = r.double();
    else if (type === 'summary' && field === 6 && wire === 2) {
      const sub = r.sub();
      const q = { quantile: 0, value: 0 };
      while (!sub.done()) {
        const [f, w] = sub.tag();
        if (f === 1 && w === 1) q.quantile = sub.double();
        else if (f === 2 && w === 1) q.value = sub.double();
        else sub.skip(w);
      }
      p.quantiles = [...(p.quantiles ?? []), q];
    } else r.skip(wire);
  }
  return p;
}

function readPackedFixed64(r: ProtobufReader, wire: number, into: number[] | null): number[] {
  const out = into ?? [];
  if (wire === 1) {
    out.push(Number(r.fixed64()));
    return out;
  }
  if (wire !== 2) {
    r.skip(wire);
    return out;
  }
  const sub = r.sub();
  while (!sub.done()) out.push(Number(sub.fixed64()));
  return out;
}

function readPackedDouble(r: ProtobufReader, wire: number, into: number[] | null): number[] {
  const out = into ?? [];
  if (wire === 1) {
    out.push(r.double());
    return out;
  }
  if (wire !== 2) {
    r.skip(wire);
    return out;
  }
  const sub = r.sub();
  while (!sub.done()) out.push(sub.double());
  return out;
}
