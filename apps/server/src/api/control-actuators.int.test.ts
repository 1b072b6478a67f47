import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ControlAction } from '@governor/conventions';
import type { AuditView } from '@governor/control';
import { DELIVERY_HEADERS, verifySignature } from '@governor/delivery';
import { afterEach, describe, expect, test } from 'vitest';
import type { PublishedEvent } from '../events/event-bus.ts';
import { type TestGovernor, runTicks, startTestGovernor } from './fixtures/control-test-governor.ts';
import type { PoolTraffic } from './fixtures/fleet-telemetry.ts';

// Auto-applied actions leave through configured actuators: a real HTTP receiver checks the HMAC
// signature and the idempotency key; a dead actuator never holds up a control tick.

let g: TestGovernor | null = null;
const servers: Server[] = [];
afterEach(async () => {
  await g?.close();
  g = null;
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

const h100: PoolTraffic = {
  pool: 'h100-east',
  model: 'llama-8b',
  replicas: 2,
  ratePerS: 2,
  prefillMsPerToken: 1,
};
const a100: PoolTraffic = {
  pool: 'a100-west',
  model: 'llama-8b',
  gpuType: 'A100',
  region: 'us-west',
  replicas: 2,
  ratePerS: 2,
  prefillMsPerToken: 1.2,
};
const auto = [{ name: 'auto-scale', match: { kind: ['scale'] }, auto_apply: true }];

interface Receiver {
  url: string;
  attempts: { id: string; key: string | undefined; signed: boolean }[];
  applied: Map<string, ControlAction>;
}

async function listen(
  handler: (req: IncomingMessage, res: ServerResponse, body: string) => void,
): Promise<string> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handler(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** An actuator endpoint like an operator would run: verify, dedupe by idempotency key, apply. */
async function startReceiver(secret: string, failFirst: number): Promise<Receiver> {
  const attempts: Receiver['attempts'] = [];
  const applied = new Map<string, ControlAction>();
  const url = await listen((req, res, body) => {
    const signed = verifySignature(
      req.headers[DELIVERY_HEADERS.signature] as string | undefined,
      body,
      secret,
      Date.now() / 1000,
    ).ok;
    const action = JSON.parse(body) as ControlAction;
    const key = req.headers[DELIVERY_HEADERS.idempotencyKey] as string | undefined;
    attempts.push({ id: action.id, key, signed });
    if (!signed) {
      res.writeHead(401).end();
      return;
    }
    if (attempts.filter((a) => a.id === action.id).length <= failFirst) {
      res.writeHead(500).end();
      return;
    }
    if (key && !applied.has(key)) applied.set(key, action);
    res.writeHead(200).end();
  });
  return { url, attempts, applied };
}

function nextEvent(
  type: string,
  match: (e: PublishedEvent) => boolean = () => true,
): Promise<PublishedEvent> {
  return new Promise((resolve) => {
    const off = g!.gov.events.subscribe((e) => {
      if (e.type === type && match(e)) {
        off();
        resolve(e);
      }
    });
  });
}

describe('actuators', () => {
  test('a webhook gets each action signed, is retried on 500, and applies it once; /metrics shows the target', async () => {
    const receiver = await startReceiver('hmac-secret', 2);
    g = await startTestGovernor({
      policies: auto,
      actuators: [
        {
          name: 'ops-webhook',
          type: 'webhook',
          url: `${receiver.url}/governor`,
          secret: 'hmac-secret',
          backoff_ms: 10,
        },
      ],
    });
    await runTicks(g, [h100, a100], 0, 180_000);
    const delivered = nextEvent('control.delivery');
    const [tick] = await runTicks(g, [{ ...h100, queueMs: 3000 }, a100], 180_000, 210_000);
    const action = tick!.actions.find((a) => a.kind === 'scale' && a.target.pool === 'h100-east')!;
    expect(action).toMatchObject({ type: 'apply', action: { from: 2, to: 4 } });

    // KEDA/HPA read the decision from /metrics.
    const metrics = await fetch(`${g.url}/metrics`).then((r) => r.text());
    expect(metrics).toContain('# TYPE governor_desired_replicas gauge');
    expect(metrics).toContain('governor_desired_replicas{pool="h100-east"} 4');
    expect(metrics).toContain('governor_desired_replicas{pool="a100-west"} 2');

    expect((await delivered).data).toMatchObject({
      actionId: action.id,
      actuator: 'ops-webhook',
      status: 'delivered',
      attempts: 3,
    });
    const forAction = receiver.attempts.filter((a) => a.id === action.id);
    expect(forAction).toHaveLength(3);
    expect(forAction.every((a) => a.signed && a.key === action.id)).toBe(true);
    expect([...receiver.applied.values()]).toEqual([action]);

    const { body } = await g.request<{ actions: AuditView[] }>(
      'GET',
      `/api/actions?recommendationId=${action.recommendationId}`,
    );
    expect(body.actions.map((a) => a.decision)).toEqual(
      expect.arrayContaining(['proposed', 'auto_applied', 'delivered']),
    );
    expect(body.actions.find((a) => a.decision === 'delivered')).toMatchObject({
      actor: 'actuator:ops-webhook',
      actionId: action.id,
      details: { attempts: 3, httpStatus: 200 },
    });
  });

  test('a dead actuator does not hold up evaluate; its deliveries wait in their own queue', async () => {
    // Accepts the connection and never answers.
    const dead = await listen(() => {});
    g = await startTestGovernor({
      policies: auto,
      actuators: [{ name: 'dead', type: 'simulator', url: dead, timeout_ms: 60_000, max_attempts: 3 }],
    });
    await runTicks(g, [h100, a100], 0, 180_000);
    const [tick] = await runTicks(
      g,
      [
        { ...h100, queueMs: 3000 },
        { ...a100, queueMs: 3000 },
      ],
      180_000,
      210_000,
    );
    expect(tick!.actions.filter((a) => a.kind === 'scale')).toHaveLength(2);
    // The tick returned while both deliveries are still waiting on the dead endpoint.
    expect(g.gov.control.pendingDeliveries()).toBe(2);
    const [next] = await runTicks(g, [h100, a100], 210_000, 240_000);
    expect(next!.at).toBe('2024-01-01T00:04:00.000Z');

    // Shutdown cuts the waiting deliveries off, and the audit log says so after a restart.
    const dir = g.dataDir;
    await g.close({ keepData: true });
    g = await startTestGovernor({ policies: auto }, dir);
    for (const action of tick!.actions.filter((a) => a.kind === 'scale')) {
      const { body } = await g.request<{ actions: AuditView[] }>(
        'GET',
        `/api/actions?recommendationId=${action.recommendationId}`,
      );
      expect(body.actions.find((a) => a.decision === 'delivery_failed')).toMatchObject({
        actor: 'actuator:dead',
        actionId: action.id,
      });
    }
  });
});
