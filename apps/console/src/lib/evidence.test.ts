import { describe, expect, it } from 'vitest';
import { parseEvidenceSignal, unitForSignal } from './evidence.ts';

describe('parseEvidenceSignal', () => {
  it('reads a signal with a label selector', () => {
    expect(parseEvidenceSignal('errorRate{pool=pool-a}')).toEqual({
      signal: 'errorRate',
      labels: { pool: 'pool-a' },
      chartable: true,
    });
  });

  it('does not chart selectors or signals the series API cannot answer', () => {
    expect(parseEvidenceSignal('errorRate{peers of pool-a}').chartable).toBe(false);
    expect(parseEvidenceSignal('engineTimeVsBaseline{pool=a}').chartable).toBe(false);
    expect(parseEvidenceSignal('hops.queue.p95').chartable).toBe(true);
    expect(parseEvidenceSignal('goodTasks').chartable).toBe(true);
    expect(parseEvidenceSignal('hops.teleport.p95').chartable).toBe(false);
  });

  it('picks units', () => {
    expect(unitForSignal('ttftMs.p95')).toBe('ms');
    expect(unitForSignal('errorRate')).toBe('%');
    expect(unitForSignal('costPerSuccessfulTaskUsd')).toBe('$');
    expect(unitForSignal('utilizationRatio')).toBeUndefined();
  });
});
