import { createServer } from 'node:http';
import { type AddressInfo, createServer as createTcpServer } from 'node:net';
import { decodeTraceRequestJson } from '@governor/otlp';
import { afterEach, describe, expect, it } from 'vitest';
import { type TestGovernor, startTestGovernor } from '../otlp/start-test-governor.ts';

// Governor's own traces, end to end with real parts: Governor A (self-tracing on) exports through
// the real NodeSDK and OTLP exporter to a second real Governor B, or to a plain HTTP receiver.

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function governor(config: Record<string, unknown> = {}): Promise<TestGovernor> {
  const t = await startTestGovernor(config);
  open.push(t);
  return t;
}

/** One gateway → vLLM trace of a fleet service, ended a second ago, as OTLP/JSON. */
function fleetBatch(): string {
  const endNs = BigInt(Date.now() - 1_000) * 1_000_000n;
  const traceId = 'aa'.repeat(16);
  const attrs = (o: Record<string, string | number>) =>
    Object.entries(o).map(([key, v]) => ({
      key,
      value: typeof v === 'number' ? { intValue: String(v) } : { stringValue: v },
    }));
  const span = (spanId: string, parentSpanId: string, name: string, service: string, startMsAgo: number) => ({
    resource: { attributes: attrs({ 'service.name': service }) },
    scopeSpans: [
      {
        spans: [
          {
            traceId,
            spanId,
            parentSpanId,
            name,
            kind: 2,
            startTimeUnixNano: String(endNs - BigInt(startMsAgo) * 1_000_000n),
            endTimeUnixNano: String(endNs),
            attributes: attrs({
              'gen_ai.request.model': 'llama-3.1-8b',
              'gen_ai.usage.input_tokens': 120,
              'gen_ai.usage.output_tokens': 40,
            }),
          },
        ],
      },
    ],
  });
  return JSON.stringify({
    resourceSpans: [
      span('0000000000000001', '', 'POST /v1/chat/completions', 'gateway', 900),
      span('0000000000000002', '0000000000000001', 'llm_request', 'vllm', 800),
    ],
  });
}

/** A fleet batch into `t`, a snapshot from /api/signals, one control tick and one alert evaluation. */
async function exercise(t: TestGovernor): Promise<void> {
  const ingest = await fetch(`${t.url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: fleetBatch(),
  });
  expect(ingest.status).toBe(200);
  const signals = await fetch(`${t.url}/api/signals?window=5m`);
  expect(signals.status).toBe(200);
  const tick = await t.governor.control.evaluate();
  expect(tick.ok).toBe(true);
  // The alert poll may already have evaluated up to the watermark; either way one evaluation ran.
  await t.governor.alerts.evaluate();
  expect(t.governor.alerts.evaluatedUntilNs()).not.toBeNull();
}

interface StoredSpan {
  name: string;
  spanId: string;
  parentSpanId: string | null;
  traceId: string;
  attributes: Record<string, unknown>;
}

async function spansOfGovernor(t: TestGovernor): Promise<StoredSpan[]> {
  const rows = await t.sql(
    "SELECT name, span_id, parent_span_id, trace_id, attributes FROM spans WHERE service = 'governor'",
  );
  return rows.map(([name, spanId, parentSpanId, traceId, attributes]) => ({
    name: String(name),
    spanId: String(spanId),
    parentSpanId: parentSpanId === null ? null : String(parentSpanId),
    traceId: String(traceId),
    attributes:
      typeof attributes === 'string' ? JSON.parse(attributes) : (attributes as Record<string, unknown>),
  }));
}

describe("Governor's own traces", () => {
  it('reach a second Governor with service.name governor: ingest (decode, write), signals, control tick, alert evaluation', async () => {
    const b = await governor();
    const a = await governor({
      self_telemetry: { traces: { enabled: true, endpoint: b.url, protocol: 'http/protobuf' } },
    });
    await exercise(a);
    // Closing A flushes its exporter; B answers an export only once the spans are durable.
    await a.close();

    const spans = await spansOfGovernor(b);
    const names = new Set(spans.map((s) => s.name));
    for (const name of [
      'governor.otlp.ingest',
      'decode',
      'write',
      'governor.signals.snapshot',
      'governor.control.tick',
      'governor.alerts.evaluate',
    ]) {
      expect(names, `span ${name} among ${[...names].join(', ')}`).toContain(name);
    }
    // Exactly the one fleet batch sent to A was traced, not B's ingest of A's exports.
    const ingests = spans.filter((s) => s.name === 'governor.otlp.ingest');
    expect(ingests).toHaveLength(1);
    const ingest = ingests[0]!;
    expect(ingest.attributes['governor.otlp.spans']).toBe(2);
    expect(ingest.attributes['governor.otlp.format']).toBe('json');
    const children = spans.filter((s) => s.parentSpanId === ingest.spanId).map((s) => s.name);
    expect(children.sort()).toEqual(['decode', 'write']);
    // The fleet's own spans stay in A, not in B.
    expect(await b.count("SELECT count(*) FROM spans WHERE service IN ('gateway', 'vllm')")).toBe(0);
  });

  it('sends nothing while off, even with an endpoint configured', async () => {
    let requests = 0;
    const receiver = createServer((req, res) => {
      requests += 1;
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    open.push({ close: () => new Promise<void>((resolve) => receiver.close(() => resolve())) });
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

    const a = await governor({ self_telemetry: { traces: { enabled: false, endpoint: url } } });
    await exercise(a);
    await a.close();
    expect(requests).toBe(0);
  });

  it('speaks OTLP/JSON to any receiver when protocol is http/json (base URL gets /v1/traces)', async () => {
    const received: { path: string; services: string[]; names: string[] }[] = [];
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const request = decodeTraceRequestJson(Buffer.concat(chunks).toString('utf8'));
        received.push({
          path: req.url ?? '',
          services: request.resourceSpans.map((rs) => String(rs.resource['service.name'])),
          names: request.resourceSpans.flatMap((rs) =>
            rs.scopeSpans.flatMap((ss) => ss.spans.map((s) => s.name)),
          ),
        });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    open.push({ close: () => new Promise<void>((resolve) => receiver.close(() => resolve())) });
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

    const a = await governor({
      self_telemetry: { traces: { enabled: true, endpoint: url, protocol: 'http/json' } },
    });
    await exercise(a);
    await a.close();
    expect(received.length).toBeGreaterThan(0);
    expect(new Set(received.map((r) => r.path))).toEqual(new Set(['/v1/traces']));
    expect(new Set(received.flatMap((r) => r.services))).toEqual(new Set(['governor']));
    const names = received.flatMap((r) => r.names);
    expect(names).toContain('governor.otlp.ingest');
    expect(names).toContain('governor.signals.snapshot');
  });

  // The port is picked before Governor binds it (its exporter must name it), so another process can
  // take it in between on a busy machine (seen once in CI as ECONNREFUSED): try again on a new port.
  it('pointed at itself, stores its own spans once and does not trace their ingest (no loop)', {
    retry: 2,
  }, async () => {
    const port = await freePort();
    // Export every 100 ms instead of every 5 s, so two export rounds pass quickly.
    const delay = process.env.OTEL_BSP_SCHEDULE_DELAY;
    process.env.OTEL_BSP_SCHEDULE_DELAY = '100';
    let a: TestGovernor;
    try {
      a = await governor({
        server: { http_port: port },
        self_telemetry: { traces: { enabled: true, endpoint: `http://127.0.0.1:${port}` } },
      });
    } finally {
      if (delay === undefined) delete process.env.OTEL_BSP_SCHEDULE_DELAY;
      else process.env.OTEL_BSP_SCHEDULE_DELAY = delay;
    }
    await exercise(a);
    await waitForSnapshotSpan(a, 5 * 60_000);
    // A second query after the first export arrived: its span travels in a later export, after any
    // span that ingesting the first export would have made.
    expect((await fetch(`${a.url}/api/signals?window=7m`)).status).toBe(200);
    await waitForSnapshotSpan(a, 7 * 60_000);
    const ingests = (await spansOfGovernor(a)).filter((s) => s.name === 'governor.otlp.ingest');
    expect(ingests.map((s) => s.attributes['governor.otlp.spans'])).toEqual([2]);
  });
});

async function waitForSnapshotSpan(t: TestGovernor, windowMs: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const spans = await spansOfGovernor(t);
    const found = spans.some(
      (s) =>
        s.name === 'governor.signals.snapshot' && s.attributes['governor.signals.window_ms'] === windowMs,
    );
    if (found) return;
    if (Date.now() > deadline) throw new Error(`no snapshot span of window ${windowMs} ms arrived`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function freePort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
