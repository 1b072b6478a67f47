import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PostgresServer, startPostgres } from '@governor/store/testing';
import { alertStateBackends } from '../../test/temp-state.ts';
import type { AlertInstance } from '../alert-instance.ts';
import type { NotificationGroupState } from '../dispatch/notification-dispatcher.ts';
import { migratePostgresAlertState } from './create-postgres-alert-repository.ts';
import { openAlertState } from './open-alert-state.ts';

// One suite, both databases: the alert episodes, notification groups and evaluation cursor a node
// saved read back the same after a restart from DuckDB (one node) and from PostgreSQL (nodes
// sharing it), where a new leader also writes over what the previous one stored.

const S = 1_000_000_000n;
const T0 = 1_767_225_600n * S; // 2026-01-01T00:00:00Z
const now = () => 1_769_904_000_000;

function episode(id: string, fingerprint: string, over: Partial<AlertInstance> = {}): AlertInstance {
  return {
    id,
    fingerprint,
    rule: 'ttft-slo',
    ruleType: 'threshold',
    state: 'pending',
    labels: { alertname: 'ttft-slo', pool: fingerprint, severity: 'page' },
    annotations: { summary: `ttftMs.p95 is 2500 (> 2000) for {pool="${fingerprint}"} — über 5m` },
    receivers: ['ops', 'pager'],
    value: 2500,
    activeAtNs: T0,
    startsAtNs: null,
    endsAtNs: null,
    lastSeenNs: T0,
    ...over,
  };
}

function group(id: string, over: Partial<NotificationGroupState> = {}): NotificationGroupState {
  return {
    id,
    receiver: 'ops',
    groupKey: id,
    groupLabels: { alertname: 'ttft-slo' },
    alerts: {},
    notified: {},
    createdAtNs: (T0 + 60n * S).toString(),
    createdAtWallMs: now(),
    lastSentAtNs: null,
    lastSentAtWallMs: null,
    changed: true,
    ...over,
  };
}

const byId = <T extends { id: string }>(items: T[]) => [...items].sort((a, b) => a.id.localeCompare(b.id));

let postgres: PostgresServer | undefined;
beforeAll(async () => {
  postgres = await startPostgres();
}, 60_000);
afterAll(async () => {
  await postgres?.stop();
});

describe.each(alertStateBackends(() => postgres!.url))('the alert repository on $name', (backend) => {
  it('brings back active episodes, resolved history, the cursor and notification groups after a restart', async () => {
    const temp = await backend.open();
    try {
      let { repository } = await openAlertState(temp.engineOptions, now);
      expect(await repository.loadActive()).toEqual([]);
      expect(await repository.loadCursor()).toBeNull();
      expect(await repository.loadGroups()).toEqual([]);

      const pending = episode('ep-1', 'a');
      const firing = episode('ep-2', 'b', { state: 'firing', startsAtNs: T0 + 60n * S, value: 2500.25 });
      const unbounded = episode('ep-3', 'c', { state: 'firing', value: Number.POSITIVE_INFINITY });
      const dropped = episode('ep-4', 'd');
      for (const a of [pending, firing, unbounded, dropped]) await repository.insert(a);
      await repository.remove(dropped.id);
      const resolved = { ...firing, state: 'resolved', endsAtNs: T0 + 120n * S, lastSeenNs: T0 + 105n * S };
      await repository.update(resolved as AlertInstance);
      const again = episode('ep-5', 'b', { activeAtNs: T0 + 180n * S, lastSeenNs: T0 + 180n * S });
      await repository.insert(again);
      const older = episode('ep-0', 'a', { rule: 'other', state: 'resolved', endsAtNs: T0 + 30n * S });
      await repository.insert(older);
      const refreshed = { ...pending, value: 3100, lastSeenNs: T0 + 45n * S, receivers: ['ops'] };
      await repository.update(refreshed);
      await repository.saveCursor(T0 + 180n * S);

      const sent = group('governor/ops:{alertname="ttft-slo"}', {
        alerts: { b: { fingerprint: 'b', status: 'firing' } as never },
        notified: { b: 'firing' },
        lastSentAtNs: (T0 + 90n * S).toString(),
        lastSentAtWallMs: now(),
        changed: false,
      });
      const gone = group('governor/pager:{alertname="ttft-slo"}', { receiver: 'pager' });
      await repository.saveGroups({ upserts: [group(sent.id), gone], deletes: [] });
      await repository.saveGroups({ upserts: [sent], deletes: [gone.id] });

      await temp.reopen();
      ({ repository } = await openAlertState(temp.engineOptions, now));
      expect(byId(await repository.loadActive())).toEqual([refreshed, { ...unbounded, value: null }, again]);
      expect(await repository.history({ limit: 10 })).toEqual([resolved, older]);
      expect(await repository.history({ limit: 1 })).toEqual([resolved]);
      expect((await repository.history({ rule: 'other', limit: 10 })).map((a) => a.id)).toEqual(['ep-0']);
      expect((await repository.history({ fingerprint: 'b', limit: 10 })).map((a) => a.id)).toEqual(['ep-2']);
      expect(await repository.loadCursor()).toBe(T0 + 180n * S);
      expect(await repository.loadGroups()).toEqual([sent]);

      // The restarted node goes on where the last one stopped.
      await repository.saveCursor(T0 + 195n * S);
      await repository.saveGroups({ upserts: [{ ...sent, changed: true }], deletes: [] });
      expect(await repository.loadCursor()).toBe(T0 + 195n * S);
      expect(await repository.loadGroups()).toEqual([{ ...sent, changed: true }]);
    } finally {
      await temp.dispose();
    }
  });

  it.runIf(backend.shared)(
    'keeps one row per episode and group when a new leader writes what the previous one stored',
    async () => {
      const temp = await backend.open();
      try {
        const previous = await openAlertState({ state: { postgres: temp.connect() } }, now);
        const next = await openAlertState({ state: { postgres: temp.connect() } }, now);
        expect(await next.repository.loadGroups()).toEqual([]);
        // The previous leader, not yet aware it lost the lease, writes once more after the next
        // one loaded; the next one then writes the same episode and group.
        const ep = episode('ep-1', 'a');
        await previous.repository.insert(ep);
        await previous.repository.saveGroups({ upserts: [group('g')], deletes: [] });
        await next.repository.insert(ep);
        const fired = { ...ep, state: 'firing' as const, startsAtNs: T0 + 60n * S, lastSeenNs: T0 + 60n * S };
        await next.repository.update(fired);
        await next.repository.saveGroups({ upserts: [group('g', { changed: false })], deletes: [] });
        await next.repository.saveCursor(T0 + 60n * S);

        expect(await previous.repository.loadActive()).toEqual([fired]);
        expect(await previous.repository.loadGroups()).toEqual([group('g', { changed: false })]);
        expect(await previous.repository.loadCursor()).toBe(T0 + 60n * S);
      } finally {
        await temp.dispose();
      }
    },
  );

  it.runIf(backend.shared)('creates its tables once when nodes start together', async () => {
    const temp = await backend.open();
    try {
      const nodes = [1, 2, 3, 4].map(() => temp.connect());
      await Promise.all(nodes.map((db) => migratePostgresAlertState(db)));
      await Promise.all(nodes.map((db) => migratePostgresAlertState(db)));
      const { repository } = await openAlertState({ state: { postgres: nodes[0]! } }, now);
      expect(await repository.loadCursor()).toBeNull();
    } finally {
      await temp.dispose();
    }
  });
});
