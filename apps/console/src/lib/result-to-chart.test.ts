import { describe, expect, it } from 'vitest';
import { resultToChart } from './result-to-chart.ts';

describe('resultToChart', () => {
  it('charts epoch-ms buckets as time and splits long rows by a series column', () => {
    const data = resultToChart(
      {
        columns: [
          { name: 'time_ms', type: 'BIGINT' },
          { name: 'pool', type: 'VARCHAR' },
          { name: 'requests', type: 'BIGINT' },
        ],
        rows: [
          [1_700_000_000_000, 'a', 3],
          [1_700_000_000_000, 'b', 4],
          [1_700_000_060_000, 'a', 5],
        ],
        truncated: false,
        elapsedMs: 1,
      },
      { series: 'pool' },
    );
    expect(data.kind).toBe('time');
    if (data.kind === 'time') {
      expect(data.series.map((s) => [s.label, s.points.length])).toEqual([
        ['a', 2],
        ['b', 1],
      ]);
    }
  });

  it('charts text on x as categories with every numeric column', () => {
    const data = resultToChart({
      columns: [
        { name: 'tenant', type: 'VARCHAR' },
        { name: 'input_tokens', type: 'HUGEINT' },
        { name: 'output_tokens', type: 'HUGEINT' },
      ],
      rows: [['acme', 10, 2]],
      truncated: false,
      elapsedMs: 1,
    });
    expect(data).toEqual({
      kind: 'category',
      x: 'tenant',
      labels: ['input_tokens', 'output_tokens'],
      rows: [{ tenant: 'acme', input_tokens: 10, output_tokens: 2 }],
    });
  });

  it('explains when there is nothing to chart', () => {
    const data = resultToChart({
      columns: [{ name: 'x', type: 'VARCHAR' }],
      rows: [['a']],
      truncated: false,
      elapsedMs: 1,
    });
    expect(data.kind).toBe('none');
  });
});
