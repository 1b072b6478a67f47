import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ActuatorConfig, type ControlAction } from '@governor/conventions';
import { afterEach, describe, expect, test } from 'vitest';
import { createDeliveryQueue, type DeliveryOutcome } from './create-delivery-queue.ts';
import { DELIVERY_HEADERS, verifySignature } from '@governor/delivery';
import { createActuatorsFromConfig } from './create-actuators-from-config.ts';
import { createHttpActuator } from './create-http-actuator.ts';

// A real HTTP receiver, as an operator's actuator would run it: it verifies the signature, applies
// each action id once, and (when told to) fails the first attempts with 500.

interface Receiver {
  url: string;
  received: { id: string; signed: boolean; idempotencyKey: string | undefined; path: string }[];
  applied: string[];
  close(): Promise<void>;
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((s) => {
      s.closeAllConnections();
      return new Promise((resolve) => s.close(resolve));
    }),
  );
});

async function startReceiver(secret: string | string[], failFirst: number, hang = false): Promise<Receiver> {
  const received: Receiver['received'] = [];
  const applied: string[] = [];
  const attempts = new Map<string, number>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (hang) return;
      const body = Buffer.concat(chunks).toString('utf8');
      // An empty secret stands for an endpoint that does not check signatures (the simulator's).
      const signed =
        secret === '' ||
        verifySignature(
          req.headers[DELIVERY_HEADERS.signature] as string | undefined,
          body,
          secret,
          Date.now() / 1000,
        ).ok;
      const action = JSON.parse(body) as ControlAction;
      const key = req.headers[DELIVERY_HEADERS.idempotencyKey] as string | undefined;
      received.push({ id: action.id, signed, idempotencyKey: key, path: req.url ?? '' });
      if (!signed) {
        res.writeHead(401).end();
        return;
      }
      const n = (attempts.get(action.id) ?? 0) + 1;
      attempts.set(action.id, n);
      if (n <= failFirst) {
        res.writeHead(500).end('try again');
        return;
      }
      if (key && !applied.includes(key)) applied.push(key);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    applied,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const action = (id: string): ControlAction => ({
  id,
  recommendationId: `rec-${id}`,
  type: 'apply',
  kind: 'scale',
  target: { pool: 'h100-east' },
  action: { from: 2, to: 3 },
  at: '2024-01-01T00:05:00.000Z',
});

function collect() {
  const outcomes: DeliveryOutcome[] = [];
  const waiters: (() => void)[] = [];
  return {
    outcomes,
    onOutcome: (o: DeliveryOutcome) => {
      outcomes.push(o);
      for (const w of waiters.splice(0)) w();
    },
    async waitFor(n: number) {
      while (outcomes.length < n) await new Promise<void>((resolve) => waiters.push(resolve));
    },
  };
}

describe('webhook actuator', () => {
  test('signs each delivery, retries 500s with backoff, and the receiver applies the action once', async () => {
    const receiver = await startReceiver('s3cret', 2);
    const sink = collect();
    const config = ActuatorConfig.parse({
      name: 'ops',
      type: 'webhook',
      url: `${receiver.url}/hooks/governor`,
      secret: 's3cret',
      backoff_ms: 5,
      max_attempts: 5,
    });
    const queue = createDeliveryQueue({
      actuators: [
        { actuator: createHttpActuator({ config, secrets: ['s3cret'] }), maxAttempts: 5, backoffMs: 5 },
      ],
      onOutcome: sink.onOutcome,
    });
    queue.enqueue(action('a1'));
    queue.enqueue(action('a1'));
    await sink.waitFor(1);
    expect(sink.outcomes[0]).toMatchObject({
      actionId: 'a1',
      actuator: 'ops',
      status: 'delivered',
      attempts: 3,
      httpStatus: 200,
    });
    expect(receiver.received).toHaveLength(3);
    expect(
      receiver.received.every((r) => r.signed && r.idempotencyKey === 'a1' && r.path === '/hooks/governor'),
    ).toBe(true);
    expect(receiver.applied).toEqual(['a1']);
    await queue.close();
  });

  test('a 4xx is final; deliveries keep their order per actuator', async () => {
    const receiver = await startReceiver('right', 0);
    const sink = collect();
    const config = ActuatorConfig.parse({
      name: 'ops',
      type: 'webhook',
      url: receiver.url,
      secret: 'wrong',
      backoff_ms: 5,
    });
    const queue = createDeliveryQueue({
      actuators: [
        { actuator: createHttpActuator({ config, secrets: ['wrong'] }), maxAttempts: 5, backoffMs: 5 },
      ],
      onOutcome: sink.onOutcome,
    });
    queue.enqueue(action('b1'));
    queue.enqueue(action('b2'));
    await sink.waitFor(2);
    expect(sink.outcomes.map((o) => [o.actionId, o.status, o.attempts, o.httpStatus])).toEqual([
      ['b1', 'failed', 1, 401],
      ['b2', 'failed', 1, 401],
    ]);
    expect(receiver.applied).toEqual([]);
    await queue.close();
  });

  test('the simulator actuator posts to {url}/actions; a receiver that never answers times out', async () => {
    const sim = await startReceiver('', 0);
    const dead = await startReceiver('', 0, true);
    const sink = collect();
    const simConfig = ActuatorConfig.parse({ name: 'sim', type: 'simulator', url: sim.url });
    const deadConfig = ActuatorConfig.parse({ name: 'dead', type: 'webhook', url: dead.url, timeout_ms: 50 });
    const queue = createDeliveryQueue({
      actuators: [
        { actuator: createHttpActuator({ config: simConfig, secrets: [] }), maxAttempts: 1, backoffMs: 5 },
        { actuator: createHttpActuator({ config: deadConfig, secrets: [] }), maxAttempts: 2, backoffMs: 5 },
      ],
      onOutcome: sink.onOutcome,
    });
    queue.enqueue(action('c1'));
    await sink.waitFor(2);
    const byActuator = Object.fromEntries(sink.outcomes.map((o) => [o.actuator, o]));
    expect(sim.received[0]?.path).toBe('/actions');
    expect(byActuator.sim).toMatchObject({ status: 'delivered' });
    expect(byActuator.dead).toMatchObject({ status: 'failed', attempts: 2 });
    expect(byActuator.dead?.error).toContain('timed out');
    await queue.close();
  });

  test('while a secret rotates, receivers on the old and on the new secret both accept the delivery', async () => {
    const onOld = await startReceiver('old-secret', 0);
    const onNew = await startReceiver(['new-secret', 'old-secret'], 0);
    const sink = collect();
    const env = { GOV_HOOK_SECRET: 'new-secret', GOV_HOOK_SECRET_PREVIOUS: 'old-secret' };
    const configs = [onOld, onNew].map((r, i) =>
      ActuatorConfig.parse({
        name: `r${i}`,
        type: 'webhook',
        url: r.url,
        secret_env: 'GOV_HOOK_SECRET',
        previous_secret_env: 'GOV_HOOK_SECRET_PREVIOUS',
      }),
    );
    const queue = createDeliveryQueue({
      actuators: createActuatorsFromConfig(configs, env),
      onOutcome: sink.onOutcome,
    });
    queue.enqueue(action('d1'));
    await sink.waitFor(2);
    expect(sink.outcomes.map((o) => o.status)).toEqual(['delivered', 'delivered']);
    expect(onOld.applied).toEqual(['d1']);
    expect(onNew.applied).toEqual(['d1']);
    expect(() => createActuatorsFromConfig(configs, { GOV_HOOK_SECRET: 'new-secret' })).toThrow(
      /GOV_HOOK_SECRET_PREVIOUS \(previous_secret_env\) is not set/,
    );
    await queue.close();
  });
});
