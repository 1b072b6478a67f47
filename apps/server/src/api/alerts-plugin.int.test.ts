import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AlertmanagerWebhookPayload } from '@governor/alerts';
import { DELIVERY_HEADERS, verifySignature } from '@governor/delivery';
import {
  type AlertsResponse,
  type DeliveryView,
  GovernorConfig,
  type Recommendation,
} from '@governor/conventions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PublishedEvent } from '../events/event-bus.ts';
import { type RunningGovernor, startGovernor } from '../start-governor.ts';

// The whole path on a real server: OTLP spans in → real signals → the alert rule fires at event
// time (the server's own watermark poll) → a real, signature-checking HTTP receiver gets the
// Alertmanager-shaped notification → more data resolves it → the API and the event stream show it.

const SECRET = 'webhook-secret-for-tests';
const T0_NS = 1_767_225_600_000_000_000n; // 2026-01-01T00:00:00Z
const S = 1_000_000_000n;

interface Received {
  payload: AlertmanagerWebhookPayload;
  signatureOk: boolean;
}

let dir: string;
let governor: RunningGovernor;
const received: Received[] = [];
const receiver = createServer(async (req: IncomingMessage, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks).toString('utf8');
  const check = verifySignature(
    req.headers[DELIVERY_HEADERS.signature] as string | undefined,
    body,
    SECRET,
    Date.now() / 1000,
  );
  received.push({ payload: JSON.parse(body), signatureOk: check.ok });
  res.writeHead(check.ok ? 200 : 401).end();
});
const published: PublishedEvent[] = [];

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = (receiver.address() as AddressInfo).port;
  dir = mkdtempSync(join(tmpdir(), 'governor-alerts-api-'));
  const config = GovernorConfig.parse({
    server: { host: '127.0.0.1', http_port: 0, grpc_port: 0, data_dir: dir },
    signals: { lateness_ms: 0 },
    control: { enabled: false },
    receivers: [
      { name: 'ops', type: 'webhook', url: `http://127.0.0.1:${port}/alerts?token=hidden`, secret: SECRET },
    ],
    alerts: {
      evaluation_interval_s: 15,
      poll_interval_ms: 50,
      group_wait_s: 0,
      group_interval_s: 0,
      rules: [
        {
          name: 'ttft-slo',
          signal: 'ttftMs.p95',
          by: ['pool'],
          op: '>',
          threshold: 2000,
          for: '30s',
          window: '1m',
          severity: 'page',
          receivers: ['ops'],
        },
        {
          type: 'event',
          name: 'recommendation-rolled-back',
          source: 'recommendation',
          match: { state: 'rolled_back' },
          by: ['kind', 'pool'],
          receivers: [],
        },
      ],
    },
  });
  governor = await startGovernor({ config });
  governor.events.subscribe((e) => published.push(e));
});

afterAll(async () => {
  await governor?.close();
  await new Promise((resolve) => receiver.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

/** One request (a root SERVER span) every 5 s of event time, per pool, with the given TTFT. */
function traces(fromS: number, toS: number, ttftSByPool: Record<string, number>) {
  const spans = [];
  for (let t = fromS; t <= toS; t += 5) {
    for (const [pool, ttftS] of Object.entries(ttftSByPool)) {
      const start = T0_NS + BigInt(t) * S;
      spans.push({
        traceId: randomBytes(16).toString('hex'),
        spanId: randomBytes(8).toString('hex'),
        name: 'chat',
        kind: 2,
        startTimeUnixNano: start.toString(),
        endTimeUnixNano: (start + 4n * S).toString(),
        attributes: [
          { key: 'governor.pool', value: { stringValue: pool } },
          { key: 'gen_ai.request.model', value: { stringValue: 'llama-8b' } },
          { key: 'gen_ai.response.time_to_first_chunk', value: { doubleValue: ttftS } },
        ],
        status: { code: 1 },
      });
    }
  }
  return {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'gateway' } }] },
        scopeSpans: [{ scope: { name: 'alerts-test' }, spans }],
      },
    ],
  };
}

async function ingest(body: object) {
  const response = await fetch(`${governor.httpUrl}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
}

async function getJson<T>(path: string): Promise<{ status: number; body: T }> {
  const response = await fetch(`${governor.httpUrl}${path}`);
  return { status: response.status, body: (await response.json()) as T };
}

/** Awaits what the server's own watermark poll makes true. */
async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('alerts on a running server', () => {
  it('fires on ingested data, notifies a signed webhook, resolves on newer data', async () => {
    // Evaluation starts at the watermark the engine first sees (history before it is not replayed
    // as new alerts), so let it see the first data before the rest streams in.
    await ingest(traces(0, 10, { a: 2.5, b: 0.3 }));
    await until(
      () => getJson<AlertsResponse>('/api/alerts'),
      (r) => r.body.evaluatedAt !== null,
      'a first evaluation',
    );
    await ingest(traces(15, 90, { a: 2.5, b: 0.3 }));
    const firing = await until(
      () => getJson<AlertsResponse>('/api/alerts?state=firing'),
      (r) => r.body.active.length === 1,
      'a firing alert',
    );
    const alert = firing.body.active[0]!;
    expect(alert).toMatchObject({
      rule: 'ttft-slo',
      ruleType: 'threshold',
      state: 'firing',
      severity: 'page',
      labels: { alertname: 'ttft-slo', pool: 'a', severity: 'page' },
      receivers: ['ops'],
    });
    expect(alert.value).toBeGreaterThan(2000);
    // Pending from the first evaluation with data, firing 30 s (event time) later.
    expect(Date.parse(alert.startsAt!) - Date.parse(alert.activeAt)).toBe(30_000);

    await until(
      async () => received.length,
      (n) => n >= 1,
      'the firing notification',
    );
    expect(received[0]!.signatureOk).toBe(true);
    expect(received[0]!.payload).toMatchObject({
      version: '4',
      status: 'firing',
      receiver: 'ops',
      alerts: [{ status: 'firing', fingerprint: alert.fingerprint, labels: { pool: 'a' } }],
    });

    await ingest(traces(95, 240, { a: 0.3, b: 0.3 }));
    const resolved = await until(
      () => getJson<AlertsResponse>('/api/alerts'),
      (r) => r.body.evaluatedAt === '2026-01-01T00:04:00.000Z',
      'evaluation to reach the watermark',
    );
    expect(resolved.body.active).toEqual([]);
    expect(resolved.body.history).toEqual([expect.objectContaining({ id: alert.id, state: 'resolved' })]);
    await until(
      async () => received.length,
      (n) => n >= 2,
      'the resolved notification',
    );
    expect(received[1]).toMatchObject({ signatureOk: true, payload: { status: 'resolved' } });

    const deliveries = await until(
      () => getJson<{ deliveries: DeliveryView[] }>(`/api/alerts/${alert.fingerprint}/deliveries`),
      (r) => r.body.deliveries.every((d) => d.status === 'delivered'),
      'both deliveries logged',
    );
    expect(deliveries.body.deliveries.map((d) => [d.notificationStatus, d.attemptLog?.length])).toEqual([
      ['resolved', 1],
      ['firing', 1],
    ]);
    expect((await getJson('/api/alerts/dead-letters')).body).toEqual({ deadLetters: [] });
    expect(published.filter((e) => e.type.startsWith('alert.')).map((e) => e.type)).toEqual(
      expect.arrayContaining(['alert.pending', 'alert.firing', 'alert.resolved', 'alert.delivery']),
    );
  });

  it('turns recommendation events on the event bus into alerts', async () => {
    const recommendation: Recommendation = {
      id: 'rec-7',
      kind: 'scale',
      target: { pool: 'a' },
      action: { from: 4, to: 6 },
      reason: 'TTFT p95 is queue-bound',
      evidence: [],
      expectedImpact: {},
      confidence: 0.9,
      state: 'rolled_back',
      policy: null,
      createdAt: '2026-01-01T00:03:00.000Z',
      updatedAt: '2026-01-01T00:03:30.000Z',
    };
    governor.events.publish({ type: 'recommendation.updated', data: recommendation });
    const r = await until(
      () => getJson<AlertsResponse>('/api/alerts?rule=recommendation-rolled-back'),
      (x) => x.body.active.length === 1,
      'the event alert',
    );
    expect(r.body.active[0]).toMatchObject({
      state: 'firing',
      labels: { alertname: 'recommendation-rolled-back', kind: 'scale', pool: 'a' },
      startsAt: '2026-01-01T00:03:30.000Z',
    });
  });

  it('lists receivers without secrets and test-fires them', async () => {
    const { body } = await getJson<{ receivers: unknown[] }>('/api/receivers');
    expect(body.receivers).toEqual([
      expect.objectContaining({
        name: 'ops',
        type: 'webhook',
        url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
        signed: true,
      }),
    ]);
    expect(JSON.stringify(body)).not.toContain(SECRET);

    const test = await fetch(`${governor.httpUrl}/api/receivers/ops/test`, { method: 'POST' });
    expect(test.status).toBe(200);
    expect(await test.json()).toMatchObject({ receiver: 'ops', outcome: 'ok', httpStatus: 200, error: null });
    expect(received.at(-1)!.payload.alerts[0]!.labels.alertname).toBe('GovernorTestNotification');

    const unknown = await fetch(`${governor.httpUrl}/api/receivers/pager/test`, { method: 'POST' });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe(
      'GOV_ERR_ALERTS_UNKNOWN_RECEIVER',
    );
  });

  it('rejects bad queries with GOV_ERR_REQUEST_INVALID', async () => {
    for (const path of [
      '/api/alerts?state=burning',
      '/api/alerts?limit=0',
      '/api/alerts/not-a-fingerprint/deliveries',
    ]) {
      const r = await getJson<{ error: { code: string; message: string } }>(path);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('GOV_ERR_REQUEST_INVALID');
    }
  });
});
