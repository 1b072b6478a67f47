import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

// A plain OTLP/HTTP JSON receiver (no Governor, no OTel code): it accepts what the real exporters
// send, keeps the decoded bodies, and answers 200 `{}` like a collector.

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  startNs: bigint;
  endNs: bigint;
  service: string;
  resource: Record<string, string | number | boolean>;
  attributes: Record<string, string | number | boolean>;
  /** How each attribute was encoded (arrays' values are JSON-encoded in `attributes`). */
  attributeTypes: Record<string, AttributeType>;
  statusCode: number;
  events: Array<{ name: string; timeNs: bigint }>;
}

export type AttributeType = 'string' | 'int' | 'double' | 'bool' | 'array' | 'other';

export interface ReceivedPoint {
  metric: string;
  kind: 'gauge' | 'sum' | 'histogram';
  timeNs: bigint;
  startNs: bigint;
  resource: Record<string, string | number | boolean>;
  attributes: Record<string, string | number | boolean>;
  /** A histogram point's value here is its count. */
  value: number;
  /** How the value was encoded (asInt / asDouble); histograms: 'double'. */
  valueType: 'int' | 'double';
  isMonotonic?: boolean;
  temporality?: number;
  bounds?: number[];
  bucketCounts?: number[];
  sum?: number;
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  points: ReceivedPoint[];
  requests: { traces: number; metrics: number; rejected: number; protobufBytes: number };
  close(): Promise<void>;
}

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
};
type KeyValue = { key: string; value: AnyValue };

function readValue(v: AnyValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue !== undefined) return JSON.stringify((v.arrayValue.values ?? []).map(readValue));
  return '';
}

function typeOf(v: AnyValue): AttributeType {
  if (v.stringValue !== undefined) return 'string';
  if (v.intValue !== undefined) return 'int';
  if (v.doubleValue !== undefined) return 'double';
  if (v.boolValue !== undefined) return 'bool';
  if (v.arrayValue !== undefined) return 'array';
  return 'other';
}

function readAttributes(list: KeyValue[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const kv of list ?? []) out[kv.key] = readValue(kv.value);
  return out;
}

// biome-ignore lint/suspicious/noExplicitAny: decoded OTLP JSON is walked structurally
function collectSpans(body: any, into: ReceivedSpan[]): void {
  for (const rs of body.resourceSpans ?? []) {
    const resource = readAttributes(rs.resource?.attributes);
    const service = String(resource['service.name'] ?? '');
    for (const ss of rs.scopeSpans ?? []) {
      for (const span of ss.spans ?? []) {
        into.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? '',
          name: span.name,
          kind: span.kind,
          startNs: BigInt(span.startTimeUnixNano),
          endNs: BigInt(span.endTimeUnixNano),
          service,
          resource,
          attributes: readAttributes(span.attributes),
          attributeTypes: Object.fromEntries(
            (span.attributes ?? []).map((kv: KeyValue) => [kv.key, typeOf(kv.value)]),
          ),
          statusCode: span.status?.code ?? 0,
          events: (span.events ?? []).map((e: { name: string; timeUnixNano: string }) => ({
            name: e.name,
            timeNs: BigInt(e.timeUnixNano),
          })),
        });
      }
    }
  }
}

// biome-ignore lint/suspicious/noExplicitAny: decoded OTLP JSON is walked structurally
function collectPoints(body: any, into: ReceivedPoint[]): void {
  for (const rm of body.resourceMetrics ?? []) {
    const resource = readAttributes(rm.resource?.attributes);
    for (const sm of rm.scopeMetrics ?? []) {
      for (const metric of sm.metrics ?? []) {
        const kind = metric.gauge ? 'gauge' : 'sum';
        for (const dp of metric.gauge?.dataPoints ?? metric.sum?.dataPoints ?? []) {
          into.push({
            metric: metric.name,
            kind,
            timeNs: BigInt(dp.timeUnixNano),
            startNs: BigInt(dp.startTimeUnixNano ?? 0),
            resource,
            attributes: readAttributes(dp.attributes),
            value: dp.asDouble ?? Number(dp.asInt),
            valueType: dp.asDouble !== undefined ? 'double' : 'int',
            ...(metric.sum
              ? { isMonotonic: metric.sum.isMonotonic, temporality: metric.sum.aggregationTemporality }
              : {}),
          });
        }
        for (const dp of metric.histogram?.dataPoints ?? []) {
          into.push({
            metric: metric.name,
            kind: 'histogram',
            timeNs: BigInt(dp.timeUnixNano),
            startNs: BigInt(dp.startTimeUnixNano ?? 0),
            resource,
            attributes: readAttributes(dp.attributes),
            value: Number(dp.count),
            valueType: 'double',
            temporality: metric.histogram.aggregationTemporality,
            bounds: (dp.explicitBounds ?? []).map(Number),
            bucketCounts: (dp.bucketCounts ?? []).map(Number),
            sum: Number(dp.sum),
          });
        }
      }
    }
  }
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const points: ReceivedPoint[] = [];
  const requests = { traces: 0, metrics: 0, rejected: 0, protobufBytes: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const contentType = req.headers['content-type'] ?? '';
      let raw = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') raw = gunzipSync(raw);
      if (req.method === 'POST' && contentType.startsWith('application/x-protobuf') && raw.length > 0) {
        // Protobuf bodies are counted, not decoded; an empty body is a valid Export*ServiceResponse.
        requests.protobufBytes += raw.length;
        if (req.url === '/v1/traces') requests.traces += 1;
        else requests.metrics += 1;
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        return;
      }
      if (req.method !== 'POST' || !contentType.startsWith('application/json')) {
        requests.rejected += 1;
        res
          .writeHead(415, { 'content-type': 'application/json' })
          .end('{"code":3,"message":"only application/json"}');
        return;
      }
      let body: unknown;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        requests.rejected += 1;
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"code":3,"message":"bad json"}');
        return;
      }
      if (req.url === '/v1/traces') {
        requests.traces += 1;
        collectSpans(body, spans);
      } else if (req.url === '/v1/metrics') {
        requests.metrics += 1;
        collectPoints(body, points);
      } else {
        requests.rejected += 1;
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    points,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
