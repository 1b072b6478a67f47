import { describe, expect, it } from 'vitest';
import type { AlertInstance } from '../alert-instance.ts';
import { fingerprintLabels } from '../labels.ts';
import { createNotificationDispatcher, type ReceiverTimings } from './notification-dispatcher.ts';

const S = 1_000_000_000n;
const T0 = 1_767_225_600n * S;
const WALL = 0; // the wall clock stands still: event time alone drives these tests

const timings: ReceiverTimings = {
  groupBy: ['alertname'],
  groupWaitMs: 30_000,
  groupIntervalMs: 300_000,
  repeatIntervalMs: 3_600_000,
  sendResolved: true,
  maxAlerts: 0,
};

function alert(
  pool: string,
  state: AlertInstance['state'],
  atNs: bigint,
  alertname = 'ttft-slo',
): AlertInstance {
  const identity = { alertname, pool };
  return {
    id: `${alertname}-${pool}`,
    fingerprint: fingerprintLabels(identity),
    rule: alertname,
    ruleType: 'threshold',
    state,
    labels: { ...identity, severity: 'page' },
    annotations: { summary: `${pool} slow` },
    receivers: ['ops'],
    value: 2500,
    activeAtNs: T0,
    startsAtNs: T0,
    endsAtNs: state === 'resolved' ? atNs : null,
    lastSeenNs: atNs,
  };
}

function dispatcher(overrides: Partial<ReceiverTimings> = {}) {
  return createNotificationDispatcher({
    receivers: new Map([['ops', { ...timings, ...overrides }]]),
    externalUrl: 'http://governor:4318',
  });
}

describe('notification dispatcher', () => {
  it('waits group_wait, then sends alerts that started together in one notification', () => {
    const d = dispatcher();
    d.update(alert('a', 'firing', T0), T0, WALL);
    d.update(alert('b', 'firing', T0 + 10n * S), T0 + 10n * S, WALL);
    expect(d.takeDue(T0 + 29n * S, WALL)).toEqual([]);
    const [due, ...rest] = d.takeDue(T0 + 30n * S, WALL);
    expect(rest).toEqual([]);
    expect(due!.repeat).toBe(false);
    expect(due!.notification).toMatchObject({
      receiver: 'ops',
      groupKey: 'governor/ops:{alertname="ttft-slo"}',
      groupLabels: { alertname: 'ttft-slo' },
      status: 'firing',
      truncatedAlerts: 0,
    });
    expect(due!.notification.alerts.map((a) => a.labels.pool)).toEqual(['a', 'b']);
    expect(d.takeDue(T0 + 31n * S, WALL)).toEqual([]);
  });

  it('sends later changes at most every group_interval, including resolutions', () => {
    const d = dispatcher();
    d.update(alert('a', 'firing', T0), T0, WALL);
    d.takeDue(T0 + 30n * S, WALL);
    d.update(alert('a', 'resolved', T0 + 60n * S), T0 + 60n * S, WALL);
    expect(d.takeDue(T0 + 60n * S, WALL)).toEqual([]);
    const [due] = d.takeDue(T0 + 330n * S, WALL);
    expect(due!.notification.status).toBe('resolved');
    expect(due!.notification.alerts[0]).toMatchObject({
      status: 'resolved',
      endsAt: '2026-01-01T00:01:00.000Z',
    });
    // Everything resolved and told: the group is gone.
    expect(d.groups()).toEqual([]);
  });

  it('reminds of still-firing alerts every repeat_interval, and not of resolved ones', () => {
    const d = dispatcher();
    d.update(alert('a', 'firing', T0), T0, WALL);
    d.takeDue(T0 + 30n * S, WALL);
    expect(d.takeDue(T0 + 3629n * S, WALL)).toEqual([]);
    const [due] = d.takeDue(T0 + 3630n * S, WALL);
    expect(due!.repeat).toBe(true);
    expect(due!.notification.alerts).toHaveLength(1);
  });

  it('lets the wall clock elapse the timers when event time stalls', () => {
    const d = dispatcher();
    d.update(alert('a', 'firing', T0), T0, 1_000);
    expect(d.takeDue(T0, 30_999)).toEqual([]);
    expect(d.takeDue(T0, 31_000)).toHaveLength(1);
  });

  it('groups per receiver by the configured labels', () => {
    const d = dispatcher({ groupBy: ['alertname', 'pool'] });
    d.update(alert('a', 'firing', T0), T0, WALL);
    d.update(alert('b', 'firing', T0), T0, WALL);
    const due = d.takeDue(T0 + 30n * S, WALL);
    expect(due.map((x) => x.notification.groupKey).sort()).toEqual([
      'governor/ops:{alertname="ttft-slo",pool="a"}',
      'governor/ops:{alertname="ttft-slo",pool="b"}',
    ]);
  });

  it('keeps a short episode: fired and resolved within group_wait still goes out, as resolved', () => {
    const d = dispatcher();
    d.update(alert('a', 'firing', T0), T0, WALL);
    d.update(alert('a', 'resolved', T0 + 15n * S), T0 + 15n * S, WALL);
    const [due] = d.takeDue(T0 + 30n * S, WALL);
    expect(due!.notification.status).toBe('resolved');
  });

  it('does not send resolutions to receivers with send_resolved off', () => {
    const d = dispatcher({ sendResolved: false });
    d.update(alert('a', 'firing', T0), T0, WALL);
    d.takeDue(T0 + 30n * S, WALL);
    d.update(alert('a', 'resolved', T0 + 60n * S), T0 + 60n * S, WALL);
    expect(d.takeDue(T0 + 1000n * S, WALL)).toEqual([]);
    expect(d.groups()).toEqual([]);
  });

  it('caps alerts per notification and counts the rest', () => {
    const d = dispatcher({ maxAlerts: 1 });
    d.update(alert('a', 'firing', T0), T0, WALL);
    d.update(alert('b', 'firing', T0), T0, WALL);
    const [due] = d.takeDue(T0 + 30n * S, WALL);
    expect(due!.notification.alerts).toHaveLength(1);
    expect(due!.notification.truncatedAlerts).toBe(1);
  });

  it('restores what was sent from its persisted state', () => {
    const d = dispatcher();
    d.update(alert('a', 'firing', T0), T0, WALL);
    d.takeDue(T0 + 30n * S, WALL);
    const { upserts } = d.takeDirty();
    const restored = dispatcher();
    restored.load(JSON.parse(JSON.stringify(upserts)));
    // Already told about the firing alert: nothing until the resolution.
    restored.update(alert('a', 'firing', T0 + 45n * S), T0 + 45n * S, WALL);
    expect(restored.takeDue(T0 + 400n * S, WALL)).toEqual([]);
    restored.update(alert('a', 'resolved', T0 + 400n * S), T0 + 400n * S, WALL);
    expect(restored.takeDue(T0 + 400n * S, WALL)[0]!.notification.status).toBe('resolved');
  });
});

describe('notification dispatcher after a crash', () => {
  it('reconciles persisted groups with the alerts that really fire', () => {
    const before = dispatcher();
    before.update(alert('a', 'firing', T0), T0, WALL);
    before.takeDue(T0 + 30n * S, WALL);
    const persisted = JSON.parse(JSON.stringify(before.takeDirty().upserts));

    // Pool a resolved and pool b fired, but the process died before the groups were saved.
    const after = dispatcher();
    after.load(persisted);
    after.reconcile([alert('b', 'firing', T0 + 60n * S)], T0 + 90n * S, WALL);
    const [due] = after.takeDue(T0 + 400n * S, WALL);
    expect(due!.notification.alerts.map((a) => [a.labels.pool, a.status, a.endsAt])).toEqual([
      ['b', 'firing', null],
      ['a', 'resolved', '2026-01-01T00:01:30.000Z'],
    ]);
  });
});
