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

  it('gives every batch its own conversations, so a task does not gather requests from every batch', () => {
    const source = createSoakBatchSource(40, 7);
    const conversations = (index: number) =>
      new Set(
        decodeTraceRequestProtobuf(source.batch(index, 1_800_000_000_000_000_000n)).resourceSpans.flatMap(
          (rs) =>
            rs.scopeSpans.flatMap((ss) =>
              ss.spans.flatMap((s) => {
                const id = s.attributes['gen_ai.conversation.id'];
                return typeof id === 'string' ? [id] : [];
              }),
            ),
        ),
      );
    const first = conversations(1);
    expect(first.size).toBeGreaterThan(0);
    // Batches 1 and 9 are copies of the same template.
    for (const id of conversations(9)) expect(first.has(id)).toBe(false);
  });
});
