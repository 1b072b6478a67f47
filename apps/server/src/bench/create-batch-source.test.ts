import { decodeTraceRequestProtobuf } from '@governor/otlp';
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
});
