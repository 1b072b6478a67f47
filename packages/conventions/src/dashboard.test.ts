import { describe, expect, it } from 'vitest';
import { parseDashboard } from './dashboard.ts';

const minimal = {
  title: 'Latency',
  panels: [{ title: 'TTFT', query: { type: 'signal', signal: 'ttftMs.p95', by: 'pool' }, chart: 'line' }],
};

describe('Dashboard schema', () => {
  it('accepts a minimal dashboard and fills defaults', () => {
    const result = parseDashboard(minimal);
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.dashboard.tags).toEqual([]);
      expect(result.dashboard.panels[0]?.width).toBe('half');
    }
  });

  it('accepts SQL panels with chart options', () => {
    const result = parseDashboard({
      title: 'Cost',
      panels: [
        {
          title: 'Tokens',
          query: { type: 'sql', sql: 'SELECT 1 AS x, 2 AS y', limit: 100 },
          chart: 'stacked-bar',
          options: { x: 'x', y: ['y'], unit: '$', threshold: 3 },
          width: 'full',
        },
      ],
    });
    expect(result.ok).toBe(true);
  });

  it('names the path of every problem', () => {
    const result = parseDashboard({
      title: 'Broken',
      panels: [{ title: 'x', query: { type: 'signal', signal: 'ttft ms' }, chart: 'pie', extra: true }],
    });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      const paths = result.issues.map((i) => i.path);
      expect(paths).toEqual(expect.arrayContaining(['panels.0.query.signal', 'panels.0.chart', 'panels.0']));
    }
  });

  it('refuses a dashboard without panels', () => {
    expect(parseDashboard({ title: 'Empty', panels: [] }).ok).toBe(false);
  });
});
