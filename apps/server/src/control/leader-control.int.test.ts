import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ControlAction, GovernorConfig } from '@governor/conventions';
import {
  type ControlRepository,
  createActuatorsFromConfig,
  createControlEngine,
  createPostgresRepository,
  migratePostgresControlState,
} from '@governor/control';
import { DELIVERY_HEADERS } from '@governor/delivery';
import { type PostgresServer, startPostgres } from '@governor/store/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLeaderControl } from './leader-control.ts';

// The control loop over state shared in PostgreSQL: a follower refuses changes (not_leader) and
// reads what the leader wrote; a node that takes over from a leader that died between recording an
// action as applied and delivering it sends that action once, under the action's own id as the
// idempotency key — and a later takeover does not send it again.

type Rec = Parameters<ControlRepository['saveRecommendations']>[0][number];
const T = BigInt(Date.now() - 60_000) * 1_000_000n;

let postgres: PostgresServer;
let pool: pg.Pool;
let server: Server;
let receiverUrl: string;
const received: { id: string; key: string | undefined }[] = [];
const errors: unknown[] = [];

beforeAll(async () => {
  postgres = await startPostgres();
  pool = new pg.Pool({ connectionString: postgres.url, max: 4 });
  // An idle client whose server goes away (PostgreSQL stopping at teardown) reports it on the pool;
  // without a listener that is an uncaught exception of the whole run.
  pool.on('error', () => undefined);
  await migratePostgresControlState(pool);
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const action = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ControlAction;
      received.push({
        id: action.id,
        key: req.headers[DELIVERY_HEADERS.idempotencyKey] as string | undefined,
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/governor`;
}, 60_000);

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await pool?.end();
  await postgres?.stop();
});

const config = GovernorConfig.parse({
  control: { interval_s: 30 },
  actuators: [{ name: 'hook', type: 'webhook', url: 'http://127.0.0.1:1/unused', max_attempts: 1 }],
});

function factory(repository: ControlRepository) {
  return (leader: boolean) =>
    createControlEngine({
      config,
      resumeDeliveries: leader,
      // No tick runs here: the watermark is unknown.
      signals: {
        watermarkNs: async () => null,
        oldestEventNs: async () => null,
        snapshot: async () => ({ at: '', window: '', groups: [] }) as never,
      },
      repository,
      actuators: createActuatorsFromConfig([{ ...config.actuators[0]!, url: receiverUrl }], {}, []),
    });
}

function appliedRecord(id: string, actionId: string): Rec {
  return {
    id,
    kind: 'scale',
    action: { from: 2, to: 3 },
    previousAction: { from: 2, to: 2 },
    target: { pool: 'llama-8b-h100' },
    targetKey: 'pool=llama-8b-h100',
    direction: 'increase',
    reason: 'TTFT p95 over the SLO',
    evidence: [],
    expectedImpact: { summary: '2 → 3 replicas' },
    confidence: 0.9,
    state: 'applied',
    policy: 'auto',
    gate: 'auto-applied',
    scopePools: ['llama-8b-h100'],
    cause: null,
    createdNs: T,
    updatedNs: T,
    appliedNs: T,
    verifiedNs: null,
    baseline: null,
    actionId,
    verification: null,
    hold: null,
  } as unknown as Rec;
}

async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the control loop with a leader lease', () => {
  it('refuses changes on a follower and reads what the shared state holds', async () => {
    const repository = createPostgresRepository(pool);
    await repository.saveRecommendations([appliedRecord('rec-follower', 'act-follower-settled')]);
    await repository.appendAudit([
      {
        id: 'audit-delivered-follower',
        atNs: T,
        recordedAtMs: Date.now(),
        recommendationId: 'rec-follower',
        actionId: 'act-follower-settled',
        kind: 'scale',
        target: { pool: 'llama-8b-h100' },
        decision: 'delivered',
        actor: 'actuator:hook',
        reason: 'apply delivered to hook',
        result: 'delivered (HTTP 200)',
        details: { attempts: 1, httpStatus: 200, error: null },
      } as never,
    ]);
    const control = await createLeaderControl({
      create: factory(repository),
      refreshMs: 60_000,
      onError: () => {},
    });
    try {
      expect(control.isLeader()).toBe(false);
      expect(await control.engine.getRecommendation('rec-follower')).toMatchObject({ state: 'applied' });
      expect(await control.engine.approve('rec-follower', 'alice')).toMatchObject({
        ok: false,
        code: 'not_leader',
      });
      expect(await control.engine.evaluate()).toMatchObject({ ok: false, code: 'not_leader' });
      await expect(control.engine.setPolicies([], 'alice')).rejects.toMatchObject({
        code: 'GOV_ERR_CONTROL_NOT_LEADER',
      });
    } finally {
      await control.close();
    }
  });

  it('sends an action the dead leader recorded as applied but never delivered, once, under its own id', async () => {
    const repository = createPostgresRepository(pool);
    await repository.saveRecommendations([appliedRecord('rec-pending', 'act-pending')]);
    const before = received.length;
    const first = await createLeaderControl({
      create: factory(repository),
      refreshMs: 60_000,
      onError: (e) => errors.push(e),
    });
    // As a follower it sends nothing.
    await new Promise((r) => setTimeout(r, 300));
    expect(received.slice(before)).toEqual([]);
    await first.setLeader(true);
    await until('the resent action', () => received.slice(before).some((r) => r.id === 'act-pending'));
    expect(received.slice(before).filter((r) => r.id === 'act-pending')).toEqual([
      { id: 'act-pending', key: 'act-pending' },
    ]);
    // The action delivered earlier (settled in the audit log) was not sent again.
    expect(received.some((r) => r.id === 'act-follower-settled')).toBe(false);
    await until('the delivery in the audit log', async () =>
      (await repository.listAudit({ recommendationId: 'rec-pending', limit: 10 })).some(
        (e) => e.decision === 'delivered' && e.actionId === 'act-pending',
      ),
    );
    await first.close();
    // The next leader finds the delivery recorded: nothing is sent twice.
    const second = await createLeaderControl({
      create: factory(repository),
      refreshMs: 60_000,
      onError: () => {},
    });
    await second.setLeader(true);
    await new Promise((r) => setTimeout(r, 500));
    await second.close();
    expect(received.filter((r) => r.id === 'act-pending')).toHaveLength(1);
    expect(errors).toEqual([]);
  });
});
