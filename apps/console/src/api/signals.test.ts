import { describe, expect, it } from 'vitest';
import { normalizeSeries, pivotSeries } from './signals.ts';

describe('normalizeSeries', () => {
  it('reads the server shape and moves points to the start of their step', () => {
    const result = normalizeSeries(
      {
        signal: 'ttftMs.p95',
        step: '1m',
        series: [
          {
            key: { pool: 'a' },
            points: [
              { t: '2025-01-01T00:02:00.000Z', v: 120 },
              { t: '2025-01-01T00:01:00.000Z', v: null },
            ],
          },
        ],
      },
      'ttftMs.p95',
    );
    expect(result.stepMs).toBe(60_000);
    expect(result.series[0]).toEqual({
      key: { pool: 'a' },
      label: 'a',
      points: [
        { t: Date.parse('2025-01-01T00:00:00Z'), value: null },
        { t: Date.parse('2025-01-01T00:01:00Z'), value: 120 },
      ],
    });
  });

  it('labels an ungrouped series "fleet", joins multi-dimension keys and sorts by label', () => {
    const result = normalizeSeries(
      {
        series: [
          { key: {}, points: [] },
          { key: { pool: 'a', model: 'm' }, points: [] },
        ],
      },
      'x',
    );
    expect(result.series.map((s) => s.label)).toEqual(['a · m', 'fleet']);
  });
});

describe('pivotSeries', () => {
  it('makes one row per time with a column per series', () => {
    const { rows, labels } = pivotSeries([
      { key: { pool: 'a' }, label: 'a', points: [{ t: 1, value: 1 }] },
      {
        key: { pool: 'b' },
        label: 'b',
        points: [
          { t: 1, value: 2 },
          { t: 2, value: 3 },
        ],
      },
    ]);
    expect(labels).toEqual(['a', 'b']);
    expect(rows).toEqual([
      { t: 1, a: 1, b: 2 },
      { t: 2, b: 3 },
    ]);
  });
});
