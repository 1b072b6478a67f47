import { describe, expect, it } from 'vitest';
import type { TraceSpan } from '../api/traces.ts';
import { buildSpanTree } from './build-span-tree.ts';

function span(spanId: string, parentSpanId: string | null, startMs: number, durationMs: number): TraceSpan {
  return {
    spanId,
    parentSpanId,
    name: spanId,
    service: null,
    hop: null,
    startMs,
    startNs: null,
    durationMs,
    statusCode: null,
    statusMessage: null,
    outcome: null,
    attributes: {},
    events: [],
  };
}

describe('buildSpanTree', () => {
  it('orders parents before children, siblings by start, with depth and offset', () => {
    const { rows, totalMs, startMs } = buildSpanTree([
      span('decode', 'runtime', 150, 50),
      span('root', null, 100, 120),
      span('runtime', 'root', 110, 100),
      span('prefill', 'runtime', 120, 30),
      span('orphan', 'missing-parent', 105, 5),
    ]);
    expect(startMs).toBe(100);
    expect(totalMs).toBe(120);
    expect(rows.map((r) => [r.span.spanId, r.depth, r.offsetMs])).toEqual([
      ['root', 0, 0],
      ['runtime', 1, 10],
      ['prefill', 2, 20],
      ['decode', 2, 50],
      ['orphan', 0, 5],
    ]);
  });

  it('does not loop on a span that names itself as parent', () => {
    expect(buildSpanTree([span('a', 'a', 0, 1)]).rows).toHaveLength(1);
  });
});
