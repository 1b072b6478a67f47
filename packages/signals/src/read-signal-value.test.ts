import { describe, expect, it } from 'vitest';
import { readSignalValue } from './read-signal-value.ts';
import type { SignalGroupDetail } from './signal-group.ts';
import { emptyGroup } from './snapshot/assemble-groups.ts';

describe('readSignalValue', () => {
  const group: SignalGroupDetail = {
    ...emptyGroup({ pool: 'a' }),
    requests: 12,
    errorRate: 0.25,
    ttftMs: { p50: 80, p95: 310.5, p99: null },
    hops: { queue: { p50: 4, p95: 40, shareOfE2e: 0.1, shareOfTtft: 0.3 } },
  };

  it('reads dotted paths into a group', () => {
    expect(readSignalValue(group, 'requests')).toBe(12);
    expect(readSignalValue(group, 'errorRate')).toBe(0.25);
    expect(readSignalValue(group, 'ttftMs.p95')).toBe(310.5);
    expect(readSignalValue(group, 'hops.queue.p95')).toBe(40);
    expect(readSignalValue(group, 'hops.queue.shareOfTtft')).toBe(0.3);
  });

  it('answers null for no data, absent hops, non-numeric fields and unknown paths', () => {
    expect(readSignalValue(group, 'ttftMs.p99')).toBeNull();
    expect(readSignalValue(group, 'hops.prefill.p95')).toBeNull();
    expect(readSignalValue(group, 'ttftMs')).toBeNull();
    expect(readSignalValue(group, 'key.pool')).toBeNull();
    expect(readSignalValue(group, 'nope.p95')).toBeNull();
    expect(readSignalValue(group, 'successPerDollar')).toBeNull();
  });
});
