import { createHopClassifier, decodeTraceRequestProtobuf, normalizeTraceRequest } from '@governor/otlp';
import { describe, expect, it } from 'vitest';
import { createBatchSource } from './create-batch-source.ts';

describe('createBatchSource', () => {
  it('gives every batch of a run its own trace ids, in valid protobuf', () => {
    const source = createBatchSource(40, 0xabcdef01);
    const traceIds = new Set<string>();
    let spans = 0;
    for (let i = 0; i < 20; i++) {
      const request = decodeTraceRequestProtobuf(source.batch(i));
      for (const rs of request.resourceSpans) {
        for (const ss of rs.scopeSpans) {
          for (const span of ss.spans) {
            spans++;
            expect(span.traceId.slice(0, 16)).toBe(`${i.toString(16).padStart(8, '0')}abcdef01`);
            traceIds.add(span.traceId);
          }
        }
      }
    }
    expect(spans).toBe(20 * source.spansPerBatch);
    // Four spans per trace, so a quarter as many distinct trace ids as spans.
    expect(traceIds.size).toBe(spans / 4);
  });

  it('keeps each task within one batch and moves event time on from batch to batch', () => {
    const stepNs = 25_000_000n;
    const startNs = 1_700_000_000_000_000_000n;
    const source = createBatchSource(200, 7, { stepNs, startNs });
    const classifier = createHopClassifier();
    const rowsOf = (i: number) =>
      normalizeTraceRequest(decodeTraceRequestProtobuf(source.batch(i)), { classifier, aliases: {} }).rows;
    // Batches 0 and 8 share a template: same spans, other tasks, later times.
    const first = rowsOf(0);
    const again = rowsOf(8);
    expect(again.length).toBe(first.length);
    const tasks = (rows: typeof first) => new Set(rows.map((r) => r.taskId));
    const shared = [...tasks(first)].filter((t) => tasks(again).has(t));
    expect(shared).toEqual([]);
    expect(tasks(again).size).toBe(tasks(first).size);
    for (let k = 0; k < first.length; k++) {
      expect(again[k]!.startNs - first[k]!.startNs).toBe(8n * stepNs);
      expect(again[k]!.endNs - first[k]!.endNs).toBe(8n * stepNs);
      expect(again[k]!.durationMs).toBe(first[k]!.durationMs);
      if (first[k]!.firstTokenNs !== null)
        expect(again[k]!.firstTokenNs! - first[k]!.firstTokenNs!).toBe(8n * stepNs);
      const {
        traceId: _a,
        spanId: _b,
        parentSpanId: _c,
        taskId: _d,
        conversationId: _e,
        workflowId: _f,
        startNs: _g,
        endNs: _h,
        firstTokenNs: _i,
        attributes: _j,
        events: _k,
        ...rest
      } = again[k]!;
      const {
        traceId: _a2,
        spanId: _b2,
        parentSpanId: _c2,
        taskId: _d2,
        conversationId: _e2,
        workflowId: _f2,
        startNs: _g2,
        endNs: _h2,
        firstTokenNs: _i2,
        attributes: _j2,
        events: _k2,
        ...restFirst
      } = first[k]!;
      expect(rest).toEqual(restFirst);
    }
    expect(first.every((r) => r.startNs >= startNs - 60_000_000_000n)).toBe(true);
  });
});
