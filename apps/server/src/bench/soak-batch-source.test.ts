import { decodeTraceRequestProtobuf } from '@governor/otlp';
import { describe, expect, it } from 'vitest';
import { createSoakBatchSource } from './soak-batch-source.ts';

describe('createSoakBatchSource', () => {
  it('gives every batch its own trace ids and moves its event times', () => {
    const source = createSoakBatchSource(40, 0xabcdef01);
    const at = 1_800_000_000_000_000_000n;
    const spans = (index: number, startNs: bigint) =>
      decodeTraceRequestProtobuf(source.batch(index, startNs)).resourceSpans.flatMap((rs) =>
        rs.scopeSpans.flatMap((ss) => ss.spans),
      );
    const a = spans(3, at);
    const b = spans(11, at + 60_000_000_000n);
    expect(a).toHaveLength(40);
    expect(a.every((s) => s.traceId.startsWith('00000003abcdef01'))).toBe(true);
    expect(b.every((s) => s.traceId.startsWith('0000000babcdef01'))).toBe(true);
    const first = (list: typeof a) => list.map((s) => s.startNs).sort((x, y) => (x < y ? -1 : 1))[0]!;
    expect(first(a) - at).toBeLessThan(5_000_000n);
    expect(first(a) >= at).toBe(true);
    expect(first(b) - first(a)).toBe(60_000_000_000n);
    expect(a.every((s) => s.endNs > s.startNs)).toBe(true);
  });
});
