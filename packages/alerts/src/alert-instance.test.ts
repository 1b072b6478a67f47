import { describe, expect, it } from 'vitest';
import { type AlertInstance, advanceAlert, type ConditionObservation } from './alert-instance.ts';

const S = 1_000_000_000n;
let ids = 0;
const nextId = () => `id-${++ids}`;

function observation(value: number, forMs = 60_000): ConditionObservation {
  return {
    fingerprint: 'fp',
    rule: 'ttft-slo',
    ruleType: 'threshold',
    labels: { alertname: 'ttft-slo', pool: 'a' },
    annotations: { summary: `ttft ${value}` },
    receivers: ['ops'],
    value,
    forMs,
  };
}

describe('advanceAlert', () => {
  it('goes inactive → pending → firing (after `for`) → resolved', () => {
    const pending = advanceAlert(null, observation(2500), 100n * S, nextId);
    expect(pending.change).toBe('pending');
    expect(pending.next).toMatchObject({ state: 'pending', activeAtNs: 100n * S, startsAtNs: null });

    const stillPending = advanceAlert(pending.next, observation(2600), 130n * S, nextId);
    expect(stillPending.change).toBeNull();
    expect(stillPending.next).toMatchObject({ state: 'pending', value: 2600 });

    const firing = advanceAlert(stillPending.next, observation(2700), 160n * S, nextId);
    expect(firing.change).toBe('firing');
    expect(firing.next).toMatchObject({ state: 'firing', activeAtNs: 100n * S, startsAtNs: 160n * S });

    const resolved = advanceAlert(firing.next, null, 175n * S, nextId);
    expect(resolved.change).toBe('resolved');
    expect(resolved.next).toMatchObject({ state: 'resolved', endsAtNs: 175n * S, id: firing.next!.id });
  });

  it('fires at once without `for`', () => {
    const step = advanceAlert(null, observation(2500, 0), 10n * S, nextId);
    expect(step.change).toBe('firing');
    expect(step.next).toMatchObject({ state: 'firing', startsAtNs: 10n * S });
  });

  it('drops a pending alert whose condition lapses, leaving no history', () => {
    const pending = advanceAlert(null, observation(2500), 10n * S, nextId).next;
    expect(advanceAlert(pending, null, 20n * S, nextId)).toEqual({ next: null, change: 'dropped' });
  });

  it('starts a new episode (same fingerprint, new id) after a resolution', () => {
    const resolved: AlertInstance = {
      ...advanceAlert(null, observation(2500, 0), 10n * S, nextId).next!,
      state: 'resolved',
      endsAtNs: 20n * S,
    };
    const again = advanceAlert(resolved, observation(2500, 0), 30n * S, nextId);
    expect(again.change).toBe('firing');
    expect(again.next!.fingerprint).toBe(resolved.fingerprint);
    expect(again.next!.id).not.toBe(resolved.id);
  });
});
