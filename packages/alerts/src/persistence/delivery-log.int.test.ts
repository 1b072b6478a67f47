import type { DeliveryResult } from '@governor/delivery';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PostgresServer, startPostgres } from '@governor/store/testing';
import { eventually } from '../../test/eventually.ts';
import { alertStateBackends, type TempAlertState } from '../../test/temp-state.ts';
import { createDeliveryQueue, type DeliveryQueue, type SendFn } from '../delivery/delivery-queue.ts';
import type { ReceiverRuntime } from '../delivery/receiver-runtime.ts';
import type { Notification } from '../dispatch/notification.ts';
import type { DeliveryAttemptRecord, DeliveryLog, DeliveryRecord } from './delivery-log.ts';
import { openAlertState } from './open-alert-state.ts';

// One suite, both databases: the outbox and delivery log read back the same after a restart from
// DuckDB (one node) and from PostgreSQL (nodes sharing it), where a delivery is also never sent by
// two nodes at once nor recorded twice.

const W0 = 1_769_904_000_000; // wall clock, ms
const now = () => W0;

function notification(receiver: string, fingerprints: string[], status: 'firing' | 'resolved'): Notification {
  return {
    receiver,
    groupKey: `governor/${receiver}:{alertname="ttft-slo"}`,
    groupLabels: { alertname: 'ttft-slo' },
    status,
    alerts: fingerprints.map((fingerprint) => ({
      fingerprint,
      status,
      labels: { alertname: 'ttft-slo', pool: fingerprint },
      annotations: { summary: 'ttftMs.p95 is 2500 (> 2000)' },
      startsAt: '2026-01-01T00:01:00.000Z',
      endsAt: status === 'resolved' ? '2026-01-01T00:02:15.000Z' : null,
      generatorUrl: `http://governor.example:4318/api/alerts?fingerprint=${fingerprint}`,
      value: 2500,
    })),
    truncatedAlerts: 0,
    externalUrl: 'http://governor.example:4318',
    at: '2026-01-01T00:01:30.000Z',
  };
}

function delivery(
  id: string,
  n: Notification,
  createdAtMs: number,
  kind: DeliveryRecord['kind'] = 'notification',
) {
  return {
    id,
    seq: 0,
    kind,
    receiver: n.receiver,
    receiverType: 'webhook',
    groupKey: n.groupKey,
    notificationStatus: n.status,
    fingerprints: n.alerts.map((a) => a.fingerprint),
    notification: n,
    status: 'pending',
    attempts: 0,
    createdAtMs,
    retryUntilMs: createdAtMs + (kind === 'test' ? 0 : 600_000),
    nextAttemptAtMs: createdAtMs,
    lastAttemptAtMs: null,
    finishedAtMs: null,
    lastHttpStatus: null,
    lastError: null,
  } satisfies DeliveryRecord as DeliveryRecord;
}

/** Queues as the delivery queue does: numbered after the last one, the stored number kept. */
async function queue(log: DeliveryLog, record: DeliveryRecord): Promise<DeliveryRecord> {
  const seq = (await log.maxSeq()) + 1;
  return { ...record, seq: await log.insert({ ...record, seq }) };
}

/** Records one attempt as the delivery queue does; returns the delivery after it. */
async function attempt(
  log: DeliveryLog,
  record: DeliveryRecord,
  atMs: number,
  outcome: DeliveryAttemptRecord['outcome'],
  httpStatus: number | null,
): Promise<{ after: DeliveryRecord; logged: DeliveryAttemptRecord }> {
  const attempts = record.attempts + 1;
  const error = outcome === 'ok' ? null : `HTTP ${httpStatus}`;
  const finished = outcome !== 'retryable' || record.kind === 'test';
  const after: DeliveryRecord = {
    ...record,
    attempts,
    status: outcome === 'ok' ? 'delivered' : finished ? 'dead' : 'pending',
    lastAttemptAtMs: atMs,
    lastHttpStatus: httpStatus,
    lastError: error,
    finishedAtMs: finished ? atMs + 12 : null,
    nextAttemptAtMs: finished ? null : atMs + 1_000,
  };
  const logged: DeliveryAttemptRecord = {
    deliveryId: record.id,
    attempt: attempts,
    startedAtMs: atMs,
    durationMs: 12.5,
    outcome,
    httpStatus,
    error,
    retryAfterMs: outcome === 'retryable' ? 1_000 : null,
  };
  await log.recordAttempt(logged, after);
  return { after, logged };
}

const ids = (records: DeliveryRecord[]) => records.map((r) => r.id);

/**
 * Delivery queues of nodes sharing one PostgreSQL schema, sending through one fake receiver that
 * holds each request until the test finishes it (or the sending node stops).
 */
function deliveryNodes(temp: TempAlertState) {
  const sends: string[] = [];
  const finishers: ((result: DeliveryResult) => void)[] = [];
  const queues: DeliveryQueue[] = [];
  const send: SendFn = (_receiver, _notification, { deliveryId, signal }) =>
    new Promise((resolve, reject) => {
      sends.push(deliveryId);
      finishers.push(resolve);
      signal.addEventListener('abort', () => reject(new Error('aborted')));
    });
  const receiver = { name: 'ops', type: 'webhook', timeoutMs: 100 } as ReceiverRuntime;
  const log = async () =>
    (await openAlertState({ state: { postgres: temp.connect() } }, Date.now)).deliveryLog;
  return {
    sends,
    finish: (index: number, result: DeliveryResult) => finishers[index]!(result),
    log,
    async node() {
      const queue = createDeliveryQueue({
        log: await log(),
        receivers: new Map([['ops', receiver]]),
        initialBackoffMs: 20,
        maxBackoffMs: 100,
        retryHorizonMs: 600_000,
        maxConcurrent: 4,
        now: Date.now,
        random: () => 0.5,
        send,
        claimMarginMs: 9_900, // a claim lasts 10 s, far longer than any wait of these tests
      });
      queues.push(queue);
      return queue;
    },
    async stop() {
      for (const queue of queues) await queue.stop();
    },
  };
}

let postgres: PostgresServer | undefined;
beforeAll(async () => {
  postgres = await startPostgres();
}, 60_000);
afterAll(async () => {
  await postgres?.stop();
});

describe.each(alertStateBackends(() => postgres!.url))('the delivery log on $name', (backend) => {
  it('keeps deliveries in the order queued, each attempt once, finished ones pruned, across a restart', async () => {
    const temp = await backend.open();
    try {
      let { deliveryLog: log } = await openAlertState(temp.engineOptions, now);
      expect(await log.maxSeq()).toBe(0);
      expect(await log.pending()).toEqual([]);
      const d1 = await queue(log, delivery('del-1', notification('ops', ['a'], 'firing'), W0));
      const d2 = await queue(log, delivery('del-2', notification('strict', ['a', 'b'], 'firing'), W0 + 1));
      const d3 = await queue(log, delivery('del-3', notification('ops', ['b'], 'resolved'), W0 + 2));
      const t1 = await queue(log, delivery('del-4', notification('ops', ['t'], 'firing'), W0 + 3, 'test'));
      expect([d1, d2, d3, t1].map((d) => d.seq)).toEqual([1, 2, 3, 4]);

      const first = await attempt(log, d1, W0 + 10, 'retryable', 503);
      const second = await attempt(log, first.after, W0 + 1_010, 'ok', 200);
      const rejected = await attempt(log, d2, W0 + 20, 'failed', 400);
      const test = await attempt(log, t1, W0 + 30, 'retryable', 503);

      await temp.reopen();
      ({ deliveryLog: log } = await openAlertState(temp.engineOptions, now));
      expect(await log.pending()).toEqual([d3]);
      expect(await log.get('del-1')).toEqual(second.after);
      expect(await log.get('missing')).toBeNull();
      expect(ids(await log.byFingerprint('a', 10))).toEqual(['del-2', 'del-1']);
      expect(ids(await log.byFingerprint('b', 1))).toEqual(['del-3']);
      expect(await log.deadLetters({ limit: 10 })).toEqual([rejected.after]); // test deliveries are not letters
      expect(await log.deadLetters({ receiver: 'ops', limit: 10 })).toEqual([]);
      expect(ids(await log.recent({ limit: 10 }))).toEqual(['del-4', 'del-3', 'del-2', 'del-1']);
      expect(await log.recent({ status: 'dead', limit: 10 })).toEqual([test.after, rejected.after]);
      expect(ids(await log.recent({ receiver: 'ops', status: 'pending', limit: 10 }))).toEqual(['del-3']);
      expect(await log.attempts(['del-2', 'del-1'])).toEqual([first.logged, second.logged, rejected.logged]);
      expect(await log.attempts([])).toEqual([]);

      // Numbers go on after the restart; pruning takes what finished before the bound, with its attempts.
      const d5 = await queue(log, delivery('del-5', notification('ops', ['a'], 'resolved'), W0 + 40));
      expect(d5.seq).toBe(5);
      await log.prune(W0 + 33); // del-2 finished at W0 + 32
      expect(ids(await log.recent({ limit: 10 }))).toEqual(['del-5', 'del-4', 'del-3', 'del-1']);
      expect(await log.attempts(['del-1', 'del-2', 'del-4'])).toEqual([
        first.logged,
        second.logged,
        test.logged,
      ]);
      await log.prune(W0 + 1_000_000);
      expect(ids(await log.recent({ limit: 10 }))).toEqual(['del-5', 'del-3']);
    } finally {
      await temp.dispose();
    }
  });

  it.runIf(backend.shared)(
    'lets one node at a time claim an attempt, and records an attempt number once',
    async () => {
      const temp = await backend.open();
      try {
        const a = (await openAlertState({ state: { postgres: temp.connect() } }, now)).deliveryLog;
        const b = (await openAlertState({ state: { postgres: temp.connect() } }, now)).deliveryLog;
        const d = await queue(a, delivery('del-1', notification('ops', ['a'], 'firing'), W0));
        // The same delivery queued again (a retried insert) keeps its row and number.
        expect(await a.insert({ ...d, seq: 99 })).toBe(d.seq);

        expect(await a.claim!(d.id, 60_000)).toEqual({ status: 'claimed', record: d });
        expect((await a.claim!(d.id, 60_000)).status).toBe('claimed'); // its own claim, renewed
        const held = await b.claim!(d.id, 60_000);
        expect(held.status).toBe('held');
        expect(held.status === 'held' && held.retryInMs > 59_000 && held.retryInMs <= 60_000).toBe(true);
        await a.release!(d.id);
        expect(await b.claim!(d.id, 60_000)).toEqual({ status: 'claimed', record: d });
        const delivered = await attempt(b, d, W0 + 10, 'ok', 200);
        // The deposed node's late record of the same attempt changes nothing.
        await attempt(a, d, W0 + 20, 'retryable', 503);
        expect(await a.get(d.id)).toEqual(delivered.after);
        expect(await a.attempts([d.id])).toEqual([delivered.logged]);
        expect(await a.claim!(d.id, 60_000)).toEqual({ status: 'gone' });

        // A node that died holding a claim holds it only until the claim runs out.
        const e = await queue(a, delivery('del-2', notification('ops', ['b'], 'firing'), W0));
        expect((await a.claim!(e.id, 100)).status).toBe('claimed');
        expect((await b.claim!(e.id, 60_000)).status).toBe('held');
        await new Promise((resolve) => setTimeout(resolve, 150));
        expect((await b.claim!(e.id, 60_000)).status).toBe('claimed');
      } finally {
        await temp.dispose();
      }
    },
  );

  it.runIf(backend.shared)(
    'sends a pending delivery once when a new leader starts while the previous one is sending it',
    async () => {
      const temp = await backend.open();
      const fleet = deliveryNodes(temp);
      try {
        const previous = await fleet.node();
        await previous.start();
        const sent = await previous.enqueue(notification('ops', ['a'], 'firing'), { kind: 'notification' });
        await eventually(
          () => fleet.sends.length,
          (n) => n === 1,
        );
        // The next leader loads the delivery as pending but leaves it to the node sending it…
        const next = await fleet.node();
        await next.start();
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(fleet.sends).toEqual([sent!.id]);
        fleet.finish(0, { status: 'delivered', httpStatus: 200 });
        // …and drops it once that one delivered it.
        await eventually(
          () => next.stats().pending,
          (n) => n === 0,
          { what: 'the next leader to drop the delivered notification' },
        );
        expect(fleet.sends).toEqual([sent!.id]);
        const log = await fleet.log();
        expect(await log.get(sent!.id)).toMatchObject({ status: 'delivered', attempts: 1 });
        expect((await log.attempts([sent!.id])).map((a) => a.attempt)).toEqual([1]);
      } finally {
        await fleet.stop();
        await temp.dispose();
      }
    },
  );

  it.runIf(backend.shared)(
    'sends what a leader that stopped mid-send left pending without waiting out its claim, once',
    async () => {
      const temp = await backend.open();
      const fleet = deliveryNodes(temp);
      try {
        const previous = await fleet.node();
        await previous.start();
        const left = await previous.enqueue(notification('ops', ['a'], 'resolved'), { kind: 'notification' });
        await eventually(
          () => fleet.sends.length,
          (n) => n === 1,
        );
        const next = await fleet.node();
        await next.start();
        const stoppedAt = Date.now();
        await previous.stop(); // aborts the send and releases its claim
        await eventually(
          () => fleet.sends.length,
          (n) => n === 2,
          { what: 'the next leader to send what the previous one left' },
        );
        expect(Date.now() - stoppedAt).toBeLessThan(5_000); // the claim would have lasted 10 s
        fleet.finish(1, { status: 'delivered', httpStatus: 200 });
        const log = await fleet.log();
        await eventually(
          () => log.get(left!.id),
          (d) => d?.status === 'delivered',
        );
        expect(fleet.sends).toEqual([left!.id, left!.id]);
        expect((await log.attempts([left!.id])).map((a) => [a.attempt, a.outcome])).toEqual([[1, 'ok']]);
      } finally {
        await fleet.stop();
        await temp.dispose();
      }
    },
  );
});
