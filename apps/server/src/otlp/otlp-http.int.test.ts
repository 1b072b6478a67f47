import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import {
  type DecodedSpan,
  type DecodedTraceRequest,
  createHopClassifier,
  encodeMetricsRequestProtobuf,
  encodeTraceRequestProtobuf,
  normalizeTraceRequest,
} from '@governor/otlp';
import {
  fleetMetricsRequest,
  metricsRequestToJson,
  syntheticTraceRequest,
  traceRequestToJson,
} from '@governor/otlp/fixtures';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGovernor, startTestGovernor } from './start-test-governor.ts';

// OTLP/HTTP as the OTLP specification describes it: status codes, google.rpc.Status bodies in
// the request's content type, partial success, the decompressed size cap, back-pressure.

const MAX_BODY_BYTES = 4 * 1024 * 1024;
let t: TestGovernor;
let seed = 100;
const now = () => BigInt(Date.now()) * 1_000_000n;

beforeAll(async () => {
  t = await startTestGovernor({ server: { max_body_bytes: MAX_BODY_BYTES } });
});
afterAll(async () => {
  await t?.close();
});

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** node:http rather than fetch: exact control over headers, chunking and what the server answers. */
function post(
  path: string,
  body: Uint8Array | string | Uint8Array[],
  headers: Record<string, string | number>,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${t.url}${path}`, { method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.on('error', reject);
    if (Array.isArray(body)) {
      const parts = [...body];
      const pump = () => {
        const next = parts.shift();
        if (next === undefined) req.end();
        else if (req.write(next)) setImmediate(pump);
        else req.once('drain', pump);
      };
      pump();
    } else req.end(body);
  });
}

const protobuf = { 'content-type': 'application/x-protobuf' };
const json = { 'content-type': 'application/json' };

function traces(spans = 8): DecodedTraceRequest {
  return syntheticTraceRequest({ spans, seed: ++seed, startNs: now() });
}
function spanIdsOf(request: DecodedTraceRequest): string[] {
  return request.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans.map((s) => s.spanId)));
}
async function stored(spanIds: readonly string[]): Promise<number> {
  return t.count(`SELECT count(*) FROM spans WHERE span_id IN (${spanIds.map((id) => `'${id}'`).join(',')})`);
}

/** The varint and length-delimited fields of a small protobuf message, by field number. */
function readFields(bytes: Buffer): Map<number, number | Buffer> {
  const fields = new Map<number, number | Buffer>();
  let pos = 0;
  const varint = () => {
    let v = 0;
    let shift = 0;
    for (;;) {
      const b = bytes[pos++]!;
      v += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return v;
      shift += 7;
    }
  };
  while (pos < bytes.length) {
    const key = varint();
    if ((key & 7) === 0) fields.set(key >>> 3, varint());
    else if ((key & 7) === 2) {
      const len = varint();
      fields.set(key >>> 3, bytes.subarray(pos, pos + len));
      pos += len;
    } else throw new Error(`unexpected wire type in key ${key}`);
  }
  return fields;
}

/** google.rpc.Status and ExportTracePartialSuccess share the shape {1: int, 2: string}. */
function readCodeAndMessage(bytes: Buffer): { code: number; message: string } {
  const fields = readFields(bytes);
  return { code: Number(fields.get(1) ?? 0), message: String(fields.get(2) ?? '') };
}

function withInvalidSpans(request: DecodedTraceRequest): DecodedTraceRequest {
  const spans = request.resourceSpans[0]!.scopeSpans[0]!.spans;
  const broken = (s: DecodedSpan, change: Partial<DecodedSpan>) => ({
    ...s,
    ...change,
    spanId: `${s.spanId.slice(0, 14)}ff`,
  });
  spans.push(broken(spans[0]!, { traceId: 'abcd' }), broken(spans[0]!, { endNs: spans[0]!.startNs - 1n }));
  return request;
}

describe('POST /v1/traces', () => {
  it('stores protobuf spans and answers 200 with an empty ExportTraceServiceResponse after commit', async () => {
    const request = traces();
    const reply = await post('/v1/traces', encodeTraceRequestProtobuf(request), protobuf);
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/x-protobuf');
    expect(reply.body).toHaveLength(0);
    expect(await stored(spanIdsOf(request))).toBe(8);
  });

  it('decodes large bodies in the worker pool, with the same answers', async () => {
    expect(t.governor.pipeline).toBeDefined();
    const request = traces(400);
    const body = encodeTraceRequestProtobuf(request);
    expect(body.length).toBeGreaterThan(64 * 1024);
    expect((await post('/v1/traces', body, protobuf)).status).toBe(200);
    expect(await stored(spanIdsOf(request))).toBe(400);
    const garbage = Buffer.concat([Buffer.from([0x0a, 0xff, 0xff, 0x7f]), Buffer.alloc(70 * 1024, 1)]);
    const refused = await post('/v1/traces', garbage, protobuf);
    expect(refused.status).toBe(400);
    expect(readCodeAndMessage(refused.body).message).toMatch(/cannot decode OTLP protobuf traces: truncated/);
    const json = await post('/v1/traces', traceRequestToJson(withInvalidSpans(traces(200))), {
      'content-type': 'application/json',
    });
    expect(JSON.parse(json.body.toString()).partialSuccess.rejectedSpans).toBe('2');
  });

  it('stores JSON spans and answers in JSON', async () => {
    const request = traces();
    const reply = await post('/v1/traces', traceRequestToJson(request), {
      'content-type': 'application/json; charset=utf-8',
    });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(reply.body.toString())).toEqual({});
    expect(await stored(spanIdsOf(request))).toBe(8);
  });

  it('accepts gzip-compressed bodies', async () => {
    const request = traces();
    const reply = await post('/v1/traces', gzipSync(encodeTraceRequestProtobuf(request)), {
      ...protobuf,
      'content-encoding': 'gzip',
    });
    expect(reply.status).toBe(200);
    expect(await stored(spanIdsOf(request))).toBe(8);
  });

  it('answers partial success for invalid spans and stores the valid ones (JSON)', async () => {
    const request = withInvalidSpans(traces());
    const reply = await post('/v1/traces', traceRequestToJson(request), json);
    expect(reply.status).toBe(200);
    const body = JSON.parse(reply.body.toString());
    expect(body.partialSuccess.rejectedSpans).toBe('2');
    expect(body.partialSuccess.errorMessage).toMatch(
      /2 spans rejected.*trace_id.*end_time_unix_nano is before/,
    );
    expect(await stored(spanIdsOf(request))).toBe(8);
  });

  it('answers partial success in protobuf for a protobuf request', async () => {
    const request = withInvalidSpans(traces());
    const reply = await post('/v1/traces', encodeTraceRequestProtobuf(request), protobuf);
    expect(reply.status).toBe(200);
    // ExportTraceServiceResponse { partial_success (1) { rejected_spans (1), error_message (2) } }
    const partial = readCodeAndMessage(readFields(reply.body).get(1) as Buffer);
    expect(partial.code).toBe(2);
    expect(partial.message).toMatch(/2 spans rejected/);
    expect(await stored(spanIdsOf(request))).toBe(8);
  });

  it('answers 400 with a google.rpc.Status in protobuf for an undecodable protobuf body', async () => {
    const reply = await post('/v1/traces', Buffer.from([0x0a, 0xff, 0xff, 0x01]), protobuf);
    expect(reply.status).toBe(400);
    expect(reply.headers['content-type']).toBe('application/x-protobuf');
    const status = readCodeAndMessage(reply.body);
    expect(status.code).toBe(3); // INVALID_ARGUMENT
    expect(status.message).toMatch(/cannot decode OTLP protobuf traces/);
  });

  it('answers 400 with a google.rpc.Status in JSON for an undecodable JSON body', async () => {
    const reply = await post('/v1/traces', '{"resourceSpans": [', json);
    expect(reply.status).toBe(400);
    expect(reply.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(reply.body.toString())).toMatchObject({
      code: 3,
      message: expect.stringMatching(/not valid JSON/),
    });
  });

  it('answers 400 for a body that is not valid gzip', async () => {
    const reply = await post('/v1/traces', Buffer.from('definitely not gzip'), {
      ...protobuf,
      'content-encoding': 'gzip',
    });
    expect(reply.status).toBe(400);
    expect(readCodeAndMessage(reply.body).message).toMatch(/cannot be inflated/);
  });

  it('answers 415 for other content types and content encodings', async () => {
    const text = await post('/v1/traces', 'hello', { 'content-type': 'text/plain' });
    expect(text.status).toBe(415);
    expect(JSON.parse(text.body.toString()).message).toMatch(/application\/x-protobuf or application\/json/);
    const none = await post('/v1/traces', 'hello', {});
    expect(none.status).toBe(415);
    const brotli = await post('/v1/traces', Buffer.from([1, 2, 3]), {
      ...protobuf,
      'content-encoding': 'br',
    });
    expect(brotli.status).toBe(415);
    expect(readCodeAndMessage(brotli.body).message).toMatch(/Content-Encoding "br"/);
  });

  it('answers 413 when Content-Length is past the cap', async () => {
    const reply = await post('/v1/traces', Buffer.alloc(MAX_BODY_BYTES + 1), protobuf);
    expect(reply.status).toBe(413);
    expect(readCodeAndMessage(reply.body).message).toMatch(/more than 4194304 bytes/);
  });

  it('answers 413 when a chunked body without Content-Length grows past the cap', async () => {
    const chunk = Buffer.alloc(256 * 1024);
    const reply = await post(
      '/v1/traces',
      Array.from({ length: 24 }, () => chunk),
      {
        ...protobuf,
        'transfer-encoding': 'chunked',
      },
    );
    expect(reply.status).toBe(413);
  });

  it('answers 413 to a gzip bomb (small on the wire, huge inflated) and keeps serving', async () => {
    // 64 gzip members of 16 MiB of zeros each: ≈1 MiB on the wire, 1 GiB inflated.
    const member = gzipSync(Buffer.alloc(16 * 1024 * 1024));
    const bomb = Buffer.concat(Array.from({ length: 64 }, () => member));
    expect(bomb.length).toBeLessThan(MAX_BODY_BYTES);
    const rssBefore = process.memoryUsage.rss();
    const reply = await post('/v1/traces', bomb, { ...protobuf, 'content-encoding': 'gzip' });
    expect(reply.status).toBe(413);
    expect(readCodeAndMessage(reply.body).message).toMatch(/inflates to more than/);
    // Inflating stopped at the cap instead of materializing the gigabyte.
    expect(process.memoryUsage.rss() - rssBefore).toBeLessThan(512 * 1024 * 1024);
    const request = traces();
    expect((await post('/v1/traces', encodeTraceRequestProtobuf(request), protobuf)).status).toBe(200);
    expect(await stored(spanIdsOf(request))).toBe(8);
  });

  it('never answers 500 to random or mutated bodies, and keeps serving', async () => {
    const valid = Buffer.from(encodeTraceRequestProtobuf(traces(4)));
    const bodies = fc.sample(
      fc.oneof(
        fc.uint8Array({ maxLength: 300 }),
        fc
          .tuple(fc.nat({ max: valid.length - 1 }), fc.integer({ min: 0, max: 255 }))
          .map(([at, v]) => Uint8Array.from(valid.map((b, i) => (i === at ? v : b)))),
        fc.nat({ max: valid.length }).map((n) => valid.subarray(0, n)),
      ),
      { numRuns: 60, seed: 7 },
    );
    for (const [i, body] of bodies.entries()) {
      const headers = i % 2 === 0 ? protobuf : json;
      const reply = await post(i % 3 === 0 ? '/v1/metrics' : '/v1/traces', body, headers);
      expect([200, 400]).toContain(reply.status);
    }
    const health = await fetch(`${t.url}/api/health`);
    expect(health.status).toBe(200);
  });
});

describe('POST /v1/metrics', () => {
  it('stores protobuf and JSON data points', async () => {
    const timeNs = now();
    const pb = await post(
      '/v1/metrics',
      encodeMetricsRequestProtobuf(fleetMetricsRequest(timeNs, 'pool-pb')),
      protobuf,
    );
    expect(pb.status).toBe(200);
    const js = await post(
      '/v1/metrics',
      metricsRequestToJson(fleetMetricsRequest(timeNs, 'pool-json')),
      json,
    );
    expect(js.status).toBe(200);
    expect(JSON.parse(js.body.toString())).toEqual({});
    const rows = await t.sql(
      "SELECT pool, count(*)::INTEGER FROM metric_points WHERE pool IN ('pool-pb', 'pool-json') GROUP BY pool ORDER BY pool",
    );
    expect(rows).toEqual([
      ['pool-json', 6],
      ['pool-pb', 6],
    ]);
  });

  it('answers partial success with rejectedDataPoints for points without a time', async () => {
    const request = fleetMetricsRequest(now(), 'pool-partial');
    request.resourceMetrics[0]!.scopeMetrics[0]!.metrics[0]!.points[0]!.timeNs = 0n;
    const reply = await post('/v1/metrics', metricsRequestToJson(request), json);
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body.toString()).partialSuccess).toMatchObject({ rejectedDataPoints: '1' });
    expect(await t.count("SELECT count(*) FROM metric_points WHERE pool = 'pool-partial'")).toBe(5);
  });
});

describe('back-pressure', () => {
  it('answers 503 with Retry-After while the write queue is full, then accepts again', async () => {
    const small = await startTestGovernor({ server: { max_queued_spans: 1000 } });
    try {
      // 20,000 rows in the queue (one write may exceed the cap when the queue is empty); the
      // writer appends them in slices, so the HTTP request is handled while they wait.
      const rows = normalizeTraceRequest(syntheticTraceRequest({ spans: 2_000, seed: 1, startNs: now() }), {
        classifier: createHopClassifier(),
        aliases: {},
      }).rows;
      const backlog = Array.from({ length: 10 }, () => rows).flat();
      const busy = small.governor.store.writer.write(backlog, []);
      const refused = await postTo(small.url, encodeTraceRequestProtobuf(traces()));
      expect(refused.status).toBe(503);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(readCodeAndMessage(refused.body)).toMatchObject({
        code: 14,
        message: expect.stringMatching(/queue is full/),
      });
      await busy;
      const request = traces();
      expect((await postTo(small.url, encodeTraceRequestProtobuf(request))).status).toBe(200);
      expect(await small.count(`SELECT count(*) FROM spans WHERE span_id = '${spanIdsOf(request)[0]}'`)).toBe(
        1,
      );
    } finally {
      await small.close();
    }
  });

  it('never drops an acknowledged span when many clients overrun a tiny queue', async () => {
    const small = await startTestGovernor({ server: { max_queued_spans: 40 } });
    try {
      const requests = Array.from({ length: 30 }, () => traces(16));
      const replies = await Promise.all(
        requests.map((r) => postTo(small.url, encodeTraceRequestProtobuf(r))),
      );
      const statuses = replies.map((r) => r.status);
      expect(statuses.every((s) => s === 200 || s === 503)).toBe(true);
      const ackedIds = requests.filter((_, i) => statuses[i] === 200).flatMap(spanIdsOf);
      const inList = ackedIds.map((id) => `'${id}'`).join(',');
      expect(await small.count(`SELECT count(*) FROM spans WHERE span_id IN (${inList})`)).toBe(
        ackedIds.length,
      );
    } finally {
      await small.close();
    }
  });
});

function postTo(url: string, body: Uint8Array): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}/v1/traces`, { method: 'POST', headers: protobuf }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}
