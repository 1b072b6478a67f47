import { DELIVERY_HEADERS, verifySignature } from '@governor/delivery';
import { type GovernorConfig, parseGovernorConfig } from '@governor/conventions';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type PostgresServer, startPostgres } from '@governor/store/testing';
import { eventually } from '../test/eventually.ts';
import { type ReceivedRequest, type Reply, reservePort, startReceiver } from '../test/http-receiver.ts';
import { createScriptedSignals } from '../test/scripted-signals.ts';
import { signalGroup } from '../test/signal-fixtures.ts';
import { type AlertStateBackend, alertStateBackends } from '../test/temp-state.ts';
import { type AlertEngine, type AlertEngineOptions, createAlertEngine } from './create-alert-engine.ts';
import type { AlertmanagerWebhookPayload } from './delivery/alertmanager-webhook-payload.ts';
import { recommendationToAlertEvent } from './alert-event.ts';

// The engine against real HTTP receivers, its state in a real DuckDB (one node) and in a real
// PostgreSQL 15 (nodes sharing it): every test runs on both and sees the same. Event time is
// scripted (the watermark moves only when a test moves it); the wall clock is a manual one, so
// group timers and the retry horizon elapse only in event time unless a test advances it.

const S = 1_000_000_000n;
const T0 = 1_767_225_600n * S; // 2026-01-01T00:00:00Z
const SECRET = 'receiver-secret';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

let postgres: PostgresServer | undefined;
beforeAll(async () => {
  postgres = await startPostgres();
}, 60_000);
afterAll(async () => {
  await postgres?.stop();
});
const backends = alertStateBackends(() => postgres!.url);
/** The backend of the suite running now (set by each suite's beforeAll). */
let backend: AlertStateBackend;

function configFor(receivers: object[], rules?: object[], extra: object = {}): GovernorConfig {
  const parsed = parseGovernorConfig({
    receivers,
    alerts: {
      evaluation_interval_s: 15,
      group_wait_s: 30,
      group_interval_s: 300,
      delivery: { initial_backoff_ms: 20, max_backoff_ms: 100, retry_horizon_s: 600 },
      external_url: 'http://governor.example:4318',
      rules: rules ?? [
        {
          name: 'ttft-slo',
          signal: 'ttftMs.p95',
          by: ['pool'],
          op: '>',
          threshold: 2000,
          for: '1m',
          severity: 'page',
          receivers: receivers.map((r) => (r as { name: string }).name),
        },
      ],
      ...extra,
    },
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.config;
}

const ttft = (pools: Record<string, number>) =>
  Object.entries(pools).map(([pool, p95]) =>
    signalGroup({ pool }, { requests: 100, ttftMs: { p50: p95 / 2, p95, p99: p95 * 1.2 } }),
  );

async function setup(options: { receivers: object[]; rules?: object[]; extra?: object }) {
  const temp = await backend.open();
  const signals = createScriptedSignals();
  let wallMs = Date.parse('2026-02-01T00:00:00Z');
  const config = configFor(options.receivers, options.rules, options.extra);
  const start = (extra: Partial<AlertEngineOptions> = {}) =>
    createAlertEngine({
      ...temp.engineOptions,
      signals: signals.source,
      config,
      now: () => wallMs,
      random: () => 0.5,
      ...extra,
    });
  let engine: AlertEngine = await start();
  let stopped = false;
  cleanups.push(async () => {
    if (!stopped) await engine.stop();
    await temp.dispose();
  });
  const at = async (offsetS: bigint) => {
    signals.setWatermark(T0 + offsetS * S);
    return engine.evaluate();
  };
  return {
    temp,
    signals,
    get engine() {
      return engine;
    },
    at,
    wallNowS: () => wallMs / 1000,
    advanceWall(ms: number) {
      wallMs += ms;
    },
    /** Another run (on PostgreSQL: another node) over the same state. */
    async restart(extra: Partial<AlertEngineOptions> = {}) {
      await engine.stop();
      stopped = true;
      await temp.reopen();
      engine = await start(extra);
      stopped = false;
    },
  };
}

/** A receiver that checks Governor's signature with its own copy of the secret, as users are told to. */
async function signedReceiver(
  nowS: () => number,
  extra: { port?: number; respond?: (r: ReceivedRequest) => Reply | Promise<Reply> } = {},
) {
  const rejected: string[] = [];
  const receiver = await startReceiver({
    port: extra.port,
    respond: (request) => {
      const check = verifySignature(
        request.headers[DELIVERY_HEADERS.signature] as string,
        request.body,
        SECRET,
        nowS(),
      );
      if (!check.ok) {
        rejected.push(check.reason);
        return { status: 401, body: `bad signature: ${check.reason}` };
      }
      return extra.respond ? extra.respond(request) : { status: 200 };
    },
  });
  cleanups.push(() => receiver.close());
  return { receiver, rejected };
}

const payloadOf = (r: ReceivedRequest) => r.json as AlertmanagerWebhookPayload;

describe.each(backends)('alert state in $name', (suiteBackend) => {
  beforeAll(() => {
    backend = suiteBackend;
  });

  describe('alert engine with a webhook receiver', () => {
    it('fires after `for`, notifies after group_wait, resolves and notifies again — signed, Alertmanager-shaped', async () => {
      const clock = { nowS: () => 0 };
      const { receiver, rejected } = await signedReceiver(() => clock.nowS());
      const t = await setup({
        receivers: [{ name: 'ops', type: 'webhook', url: `${receiver.url}/hook`, secret: SECRET }],
      });
      clock.nowS = t.wallNowS;

      t.signals.setGroups(ttft({ a: 2500, b: 800 }));
      await t.at(0n);
      expect(t.engine.activeAlerts().map((a) => [a.labels.pool, a.state])).toEqual([['a', 'pending']]);
      await t.at(45n);
      expect(t.engine.activeAlerts()[0]!.state).toBe('pending');
      await t.at(60n);
      const firing = t.engine.activeAlerts()[0]!;
      expect(firing).toMatchObject({ state: 'firing', startsAtNs: T0 + 60n * S, activeAtNs: T0 });
      expect(receiver.requests).toHaveLength(0); // group_wait (30 s event time) not over yet

      const summary = await t.at(90n);
      expect(summary.notificationsQueued).toBe(1);
      const [first] = await receiver.waitForRequests(1);
      expect(rejected).toEqual([]);
      expect(first!.path).toBe('/hook');
      expect(first!.headers[DELIVERY_HEADERS.idempotencyKey]).toMatch(/^[0-9a-f-]{36}$/);
      expect(payloadOf(first!)).toEqual({
        version: '4',
        groupKey: 'governor/ops:{alertname="ttft-slo"}',
        truncatedAlerts: 0,
        status: 'firing',
        receiver: 'ops',
        groupLabels: { alertname: 'ttft-slo' },
        commonLabels: { alertname: 'ttft-slo', pool: 'a', severity: 'page' },
        commonAnnotations: { summary: 'ttftMs.p95 is 2500 (> 2000) for {pool="a"} over 5m' },
        externalURL: 'http://governor.example:4318',
        alerts: [
          {
            status: 'firing',
            labels: { alertname: 'ttft-slo', pool: 'a', severity: 'page' },
            annotations: { summary: 'ttftMs.p95 is 2500 (> 2000) for {pool="a"} over 5m' },
            startsAt: '2026-01-01T00:01:00.000Z',
            endsAt: '0001-01-01T00:00:00Z',
            generatorURL: `http://governor.example:4318/api/alerts?fingerprint=${firing.fingerprint}`,
            fingerprint: firing.fingerprint,
          },
        ],
      });

      // Still firing at later evaluations: deduplicated, no new notification before repeat_interval.
      await t.at(120n);
      t.signals.setGroups(ttft({ a: 900, b: 800 }));
      await t.at(135n);
      expect(t.engine.activeAlerts()).toEqual([]);
      expect(receiver.requests).toHaveLength(1);
      await t.at(390n); // group_interval after the first notification
      const [, second] = await receiver.waitForRequests(2);
      expect(payloadOf(second!)).toMatchObject({
        status: 'resolved',
        alerts: [{ status: 'resolved', endsAt: '2026-01-01T00:02:15.000Z', fingerprint: firing.fingerprint }],
      });

      const [history] = await t.engine.history({ limit: 10 });
      expect(history).toMatchObject({ id: firing.id, state: 'resolved', endsAtNs: T0 + 135n * S });
      const deliveries = await eventually(
        () => t.engine.deliveriesForAlert(firing.fingerprint, 10),
        (d) => d.every((x) => x.record.status === 'delivered') && d.length === 2,
        { what: 'both deliveries logged as delivered' },
      );
      expect(
        deliveries.map((d) => [
          d.record.notificationStatus,
          d.attempts.map((a) => [a.outcome, a.httpStatus]),
        ]),
      ).toEqual([
        ['resolved', [['ok', 200]]],
        ['firing', [['ok', 200]]],
      ]);
    });

    it('never lets a slow receiver hold up evaluation, and keeps firing before resolved', async () => {
      const held: (() => void)[] = [];
      const receiver = await startReceiver({
        respond: () => new Promise<Reply>((resolve) => held.push(() => resolve({ status: 200 }))),
      });
      cleanups.push(() => receiver.close());
      const t = await setup({
        receivers: [{ name: 'slow', type: 'webhook', url: receiver.url, timeout_ms: 60_000 }],
        extra: { group_wait_s: 0, group_interval_s: 0 },
      });
      t.signals.setGroups(ttft({ a: 2500 }));
      await t.at(0n);
      await t.at(60n); // fires; notification queued; the receiver holds the request
      await eventually(
        () => held.length,
        (n) => n === 1,
        { what: 'the receiver to hold the first request' },
      );

      // Evaluation goes on while the delivery hangs: the alert resolves and its notification queues.
      t.signals.setGroups(ttft({ a: 100 }));
      const summary = await t.at(75n);
      expect(summary.evaluated).toBe(1);
      expect(t.engine.activeAlerts()).toEqual([]);
      expect(t.engine.deliveryStats()).toEqual({ pending: 2, inFlight: 1 });
      expect(held).toHaveLength(1); // the resolution waits behind the firing notification of its group

      held[0]!();
      await eventually(
        () => held.length,
        (n) => n === 2,
        { what: 'the second request' },
      );
      held[1]!();
      const requests = await receiver.waitForRequests(2);
      expect(requests.map((r) => payloadOf(r).status)).toEqual(['firing', 'resolved']);
    });
  });

  describe('delivery retries and dead letters', () => {
    it('loses nothing when a dead receiver comes back on the same port within the retry horizon', async () => {
      const port = await reservePort();
      const t = await setup({
        receivers: [{ name: 'ops', type: 'webhook', url: `http://127.0.0.1:${port}/hook`, secret: SECRET }],
        extra: { group_wait_s: 0, group_interval_s: 0 },
      });
      t.signals.setGroups(ttft({ a: 2500 }));
      await t.at(0n);
      await t.at(60n);
      t.signals.setGroups(ttft({ a: 100 }));
      await t.at(75n);
      const fingerprint = (await t.engine.history({ limit: 1 }))[0]!.fingerprint;

      // Nobody listens: attempts fail and are retried with backoff.
      const failing = await eventually(
        () => t.engine.deliveriesForAlert(fingerprint, 10),
        (d) => d.some((x) => x.attempts.length >= 3),
        { what: 'three failed attempts' },
      );
      const firstDelivery = failing.find((d) => d.record.notificationStatus === 'firing')!;
      expect(firstDelivery.record.status).toBe('pending');
      expect(firstDelivery.attempts.every((a) => a.outcome === 'retryable')).toBe(true);
      expect(firstDelivery.record.lastError).toMatch(/cannot reach 127\.0\.0\.1:\d+: ECONNREFUSED/);

      const { receiver, rejected } = await signedReceiver(t.wallNowS, { port });
      const requests = await receiver.waitForRequests(2);
      expect(rejected).toEqual([]);
      expect(requests.map((r) => payloadOf(r).status)).toEqual(['firing', 'resolved']);
      await eventually(
        () => t.engine.deliveriesForAlert(fingerprint, 10),
        (d) => d.length === 2 && d.every((x) => x.record.status === 'delivered'),
        { what: 'both delivered' },
      );
      expect(await t.engine.deadLetters({ limit: 10 })).toEqual([]);
    });

    it('turns permanent rejections and notifications past the retry horizon into dead letters', async () => {
      const rejecting = await startReceiver({ respond: () => ({ status: 400, body: 'unknown payload' }) });
      const unavailable = await startReceiver({
        respond: () => ({ status: 503, headers: { 'retry-after': '0' } }),
      });
      cleanups.push(
        () => rejecting.close(),
        () => unavailable.close(),
      );
      const t = await setup({
        receivers: [
          { name: 'strict', type: 'webhook', url: rejecting.url },
          { name: 'down', type: 'slack', url: unavailable.url },
        ],
        extra: { group_wait_s: 0 },
      });
      t.signals.setGroups(ttft({ a: 2500 }));
      await t.at(0n);
      await t.at(60n);

      const [strictDead] = await eventually(
        () => t.engine.deadLetters({ receiver: 'strict', limit: 10 }),
        (d) => d.length === 1,
        { what: 'a dead letter for the rejecting receiver' },
      );
      expect(strictDead!.record).toMatchObject({ status: 'dead', attempts: 1, lastHttpStatus: 400 });
      expect(strictDead!.record.lastError).toBe('HTTP 400: unknown payload');

      await unavailable.waitForRequests(2); // retried while inside the horizon
      expect(await t.engine.deadLetters({ receiver: 'down', limit: 10 })).toEqual([]);
      t.advanceWall(601_000); // past retry_horizon_s
      const [downDead] = await eventually(
        () => t.engine.deadLetters({ receiver: 'down', limit: 10 }),
        (d) => d.length === 1,
        { what: 'a dead letter past the horizon' },
      );
      expect(downDead!.record.lastError).toMatch(/^HTTP 503 \(retry horizon reached after \d+ attempts\)$/);
      expect(downDead!.attempts.every((a) => a.outcome === 'retryable')).toBe(true);
      expect((unavailable.requests[0]!.json as { text: string }).text).toContain(
        '*[FIRING:1] {alertname="ttft-slo"}*',
      );
    });
  });

  describe('restart', () => {
    it('keeps alert state, what was notified and undelivered notifications across a restart', async () => {
      const port = await reservePort();
      const t = await setup({
        receivers: [{ name: 'ops', type: 'webhook', url: `http://127.0.0.1:${port}/hook` }],
        extra: { group_wait_s: 0, group_interval_s: 0 },
      });
      t.signals.setGroups(ttft({ a: 2500, b: 2600 }));
      await t.at(0n);
      await t.at(30n); // both pending, `for` 1m not yet over
      await t.restart();
      expect(t.engine.activeAlerts().map((a) => [a.labels.pool, a.state, a.activeAtNs])).toEqual([
        ['a', 'pending', T0],
        ['b', 'pending', T0],
      ]);
      expect(t.engine.evaluatedUntilNs()).toBe(T0 + 30n * S);

      await t.at(60n); // `for` counted from before the restart
      expect(t.engine.activeAlerts().map((a) => a.state)).toEqual(['firing', 'firing']);
      const firstId = t.engine.activeAlerts()[0]!.id;
      // The receiver is down: the notification is pending when Governor stops.
      await eventually(
        () => t.engine.deliveries({ limit: 10 }),
        (d) => d.length === 1 && d[0]!.attempts >= 1,
        { what: 'a failed attempt' },
      );
      await t.restart();
      const receiver = await startReceiver({ port });
      cleanups.push(() => receiver.close());
      const [delivered] = await receiver.waitForRequests(1);
      expect(payloadOf(delivered!).alerts.map((a) => a.labels.pool)).toEqual(['a', 'b']);

      // Already notified before the restart: the next evaluation sends nothing new…
      await t.at(75n);
      expect(t.engine.activeAlerts()[0]!.id).toBe(firstId);
      t.signals.setGroups(ttft({ a: 100, b: 2600 }));
      await t.at(90n);
      // …and the resolution goes out, same fingerprint and startsAt as before the restart.
      const [, resolved] = await receiver.waitForRequests(2);
      expect(payloadOf(resolved!).alerts.map((a) => [a.labels.pool, a.status, a.startsAt])).toEqual([
        ['b', 'firing', '2026-01-01T00:01:00.000Z'],
        ['a', 'resolved', '2026-01-01T00:01:00.000Z'],
      ]);
      expect(receiver.requests).toHaveLength(2);
    });

    it('leaves undelivered notifications to the leader when built as a follower', async () => {
      const port = await reservePort();
      const t = await setup({
        receivers: [{ name: 'ops', type: 'webhook', url: `http://127.0.0.1:${port}/hook` }],
        extra: { group_wait_s: 0, group_interval_s: 0 },
      });
      t.signals.setGroups(ttft({ a: 2500 }));
      await t.at(0n);
      await t.at(60n); // fires; the receiver is down
      await eventually(
        () => t.engine.deliveries({ limit: 10 }),
        (d) => d.length === 1 && d[0]!.attempts >= 1,
        { what: 'a failed attempt' },
      );
      // A follower reads the state the leader left but sends nothing of it.
      await t.restart({ resumeDeliveries: false });
      const receiver = await startReceiver({ port });
      cleanups.push(() => receiver.close());
      expect(t.engine.activeAlerts().map((a) => [a.labels.pool, a.state])).toEqual([['a', 'firing']]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(receiver.requests).toHaveLength(0);
      expect((await t.engine.deliveries({ limit: 10 })).map((d) => d.status)).toEqual(['pending']);

      await t.restart(); // the leader again
      await receiver.waitForRequests(1);
      await eventually(
        () => t.engine.deliveries({ limit: 10 }),
        (d) => d.length === 1 && d[0]!.status === 'delivered',
        { what: 'the notification delivered by the leader' },
      );
      expect(receiver.requests).toHaveLength(1);
    });
  });

  describe('SLO burn rate and event rules', () => {
    it('pages on goodput burning error budget over both windows of a pair', async () => {
      const receiver = await startReceiver();
      cleanups.push(() => receiver.close());
      const t = await setup({
        receivers: [{ name: 'pager', type: 'webhook', url: receiver.url }],
        rules: [
          {
            type: 'slo_burn_rate',
            name: 'goodput-budget',
            objective: 0.99,
            by: ['pool'],
            receivers: ['pager'],
          },
        ],
        extra: { group_wait_s: 0 },
      });
      // Goodput 80% over every window: burn rate 20 > 14.4 (1h/5m) and > 6 (6h/30m).
      t.signals.setGroups(() => [signalGroup({ pool: 'a' }, { goodput: 0.8, tasks: 50 })]);
      await t.at(0n);
      const alerts = t.engine.activeAlerts();
      expect(alerts.map((a) => [a.labels.long_window, a.labels.short_window, a.state]).sort()).toEqual([
        ['1h', '5m', 'firing'],
        ['6h', '30m', 'firing'],
      ]);
      expect(new Set(t.signals.snapshots.map((s) => s.windowMs))).toEqual(
        new Set([3_600_000, 300_000, 21_600_000, 1_800_000]),
      );
      const [request] = await receiver.waitForRequests(1);
      expect(payloadOf(request!).alerts[0]!.annotations.summary).toBe(
        'error budget of goodput (objective 99%) burning 20x over 1h and 20x over 5m (> 14.4x) for {pool="a"}',
      );
    });

    it('fires on recommendation events and resolves when they stop', async () => {
      const receiver = await startReceiver();
      cleanups.push(() => receiver.close());
      const t = await setup({
        receivers: [{ name: 'ops', type: 'webhook', url: receiver.url }],
        rules: [
          {
            type: 'event',
            name: 'rolled-back',
            source: 'recommendation',
            match: { state: 'rolled_back' },
            by: ['kind', 'pool'],
            resolve_after: '10m',
            receivers: ['ops'],
          },
        ],
        extra: { group_wait_s: 0, group_interval_s: 0 },
      });
      await t.at(0n);
      const recommendation = {
        id: 'rec-1',
        kind: 'scale' as const,
        target: { pool: 'a' },
        action: { from: 4, to: 6 },
        reason: 'TTFT p95 2.5 s is queue-bound',
        evidence: [],
        expectedImpact: {},
        confidence: 0.8,
        policy: 'scale-out',
        createdAt: '2026-01-01T00:00:10.000Z',
      };
      await t.engine.recordEvent(
        recommendationToAlertEvent({
          ...recommendation,
          state: 'applied',
          updatedAt: '2026-01-01T00:00:20.000Z',
        }),
      );
      expect(t.engine.activeAlerts()).toEqual([]); // does not match
      await t.engine.recordEvent(
        recommendationToAlertEvent({
          ...recommendation,
          state: 'rolled_back',
          updatedAt: '2026-01-01T00:00:40.000Z',
        }),
      );
      expect(t.engine.activeAlerts()[0]).toMatchObject({
        state: 'firing',
        labels: { alertname: 'rolled-back', kind: 'scale', pool: 'a', severity: 'warning' },
        annotations: { summary: 'scale recommendation rolled_back: TTFT p95 2.5 s is queue-bound' },
        startsAtNs: T0 + 40n * S,
      });
      await t.at(45n);
      await receiver.waitForRequests(1);
      await t.at(600n);
      expect(t.engine.activeAlerts()).toHaveLength(1); // 9m20s since the event
      await t.at(645n);
      expect(t.engine.activeAlerts()).toEqual([]);
      const [, resolved] = await receiver.waitForRequests(2);
      expect(payloadOf(resolved!).status).toBe('resolved');
    });
  });

  describe('test-fire', () => {
    it('sends one synthetic notification and reports the outcome', async () => {
      const clock = { nowS: () => 0 };
      const { receiver, rejected } = await signedReceiver(() => clock.nowS());
      const t = await setup({
        receivers: [{ name: 'ops', type: 'webhook', url: receiver.url, secret: SECRET }],
      });
      clock.nowS = t.wallNowS;
      const outcome = await t.engine.testReceiver('ops');
      expect(outcome!.result).toEqual({ status: 'delivered', httpStatus: 200 });
      expect(outcome!.record).toMatchObject({ kind: 'test', status: 'delivered', attempts: 1 });
      expect(rejected).toEqual([]);
      expect(payloadOf(receiver.requests[0]!).alerts[0]!.labels.alertname).toBe('GovernorTestNotification');
      expect(await t.engine.testReceiver('nope')).toBeNull();

      // The delivery log keeps finished deliveries for log_retention_h (7 days by default).
      expect(await t.engine.deliveries({ limit: 10 })).toHaveLength(1);
      t.advanceWall(8 * 24 * 3_600_000);
      await t.at(0n);
      expect(await t.engine.deliveries({ limit: 10 })).toEqual([]);
    });
  });

  describe('catching up', () => {
    it('notifies the same whether the watermark moves step by step or all at once', async () => {
      // Pool a is slow until 150 s: fires at 60 s (`for` 1m), notified at 90 s (group_wait),
      // resolves at 150 s, notified at 390 s (group_interval).
      const notificationsFor = async (stepwise: boolean) => {
        const receiver = await startReceiver();
        cleanups.push(() => receiver.close());
        const t = await setup({ receivers: [{ name: 'ops', type: 'webhook', url: receiver.url }] });
        t.signals.setGroups((_windowMs, atNs) => ttft({ a: (atNs ?? T0) < T0 + 150n * S ? 2500 : 100 }));
        await t.at(0n);
        if (stepwise) for (let s = 15n; s <= 450n; s += 15n) await t.at(s);
        else expect((await t.at(450n)).evaluated).toBe(30);
        await receiver.waitForRequests(2);
        return receiver.requests.map((r) => {
          const p = payloadOf(r);
          return [p.status, p.alerts.map((a) => [a.status, a.startsAt, a.endsAt])];
        });
      };
      const stepwise = await notificationsFor(true);
      expect(stepwise).toEqual([
        ['firing', [['firing', '2026-01-01T00:01:00.000Z', '0001-01-01T00:00:00Z']]],
        ['resolved', [['resolved', '2026-01-01T00:01:00.000Z', '2026-01-01T00:02:30.000Z']]],
      ]);
      expect(await notificationsFor(false)).toEqual(stepwise);
    });
  });
});
