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
  attributes: Record<string, string | number | boolean>;
  statusCode: number;
  events: Array<{ name: string; timeNs: bigint }>;
}

export interface ReceivedPoint {
  metric: string;
  timeNs: bigint;
  attributes: Record<string, string | number | boolean>;
  value: number;
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
};
type KeyValue = { key: string; value: AnyValue };

function readValue(v: AnyValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  return '';
}

function readAttributes(list: KeyValue[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const kv of list ?? []) out[kv.key] = readValue(kv.value);
  return out;
}

// biome-ignore lint/suspicious/noExplicitAny: decoded OTLP JSON is walked structurally
function collectSpans(body: any, into: ReceivedSpan[]): void {
  for (const rs of body.resourceSpans ?? []) {
    const service = String(readAttributes(rs.resource?.attributes)['service.name'] ?? '');
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
          attributes: readAttributes(span.attributes),
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
    for (const sm of rm.scopeMetrics ?? []) {
      for (const metric of sm.metrics ?? []) {
        for (const dp of metric.gauge?.dataPoints ?? metric.sum?.dataPoints ?? []) {
          into.push({
            metric: metric.name,
            timeNs: BigInt(dp.timeUnixNano),
            attributes: readAttributes(dp.attributes),
            value: dp.asDouble ?? Number(dp.asInt),
          });
        }
        // A histogram point's value here is its count.
        for (const dp of metric.histogram?.dataPoints ?? []) {
          into.push({
            metric: metric.name,
            timeNs: BigInt(dp.timeUnixNano),
            attributes: readAttributes(dp.attributes),
            value: Number(dp.count),
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
