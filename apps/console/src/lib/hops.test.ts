import { describe, expect, it } from 'vitest';
import { computeHopSegments, findBottleneck } from './hops.ts';
import { makeGroup } from '../test-support/make-group.ts';

describe('hop attribution', () => {
  it('splits the p50 by the reported shares and finds the bottleneck', () => {
    const group = makeGroup({
      e2eMs: { p50: 1000, p95: 2000, p99: 3000 },
      hops: {
        gateway: { p50: 5, p95: 9, shareOfE2e: 0.1 },
        queue: { p50: 500, p95: 900, shareOfE2e: 0.6 },
        decode: { p50: 300, p95: 400, shareOfE2e: 0.3 },
      } as never,
    });
    const segments = computeHopSegments(group, 'e2e');
    expect(segments.map((s) => [s.hop, Math.round(s.ms)])).toEqual([
      ['gateway', 100],
      ['queue', 600],
      ['decode', 300],
    ]);
    expect(findBottleneck(segments)?.hop).toBe('queue');
  });

  it('falls back to each hop p50 without shares', () => {
    const group = makeGroup({
      hops: { prefill: { p50: 40, p95: 80 }, decode: { p50: 160, p95: 300 } } as never,
    });
    expect(computeHopSegments(group, 'e2e').map((s) => [s.hop, s.share])).toEqual([
      ['prefill', 0.2],
      ['decode', 0.8],
    ]);
  });
});
