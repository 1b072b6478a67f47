// @vitest-environment jsdom
import { cleanup, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { RetentionRunTable } from './RetentionRunTable.tsx';

afterEach(cleanup);

describe('RetentionRunTable', () => {
  it('shows how each export ended, with the rows it moved or the error that stopped it', () => {
    render(
      <RetentionRunTable
        runs={[
          {
            target: 'spans',
            state: 'published',
            finishedAt: '2025-03-01T01:00:00.000Z',
            rowsExported: 1234,
            cutoffNs: '1740787200000000000',
            error: null,
          },
          {
            target: 'metric_points',
            state: 'failed',
            finishedAt: '2025-03-01T01:00:00.000Z',
            rowsExported: 0,
            cutoffNs: null,
            error: 'No space left on device',
          },
        ]}
      />,
    );
    const [spans, metrics] = screen.getAllByRole('row').slice(1);
    expect(within(spans!).getByText('exported').className).toContain('badge--run-published');
    expect(within(spans!).getByText('1,234 rows')).toBeTruthy();
    expect(within(metrics!).getByText('failed').className).toContain('badge--run-failed');
    expect(within(metrics!).queryByText('0 rows')).toBeNull();
    expect(within(metrics!).getByText('No space left on device').className).toContain('is-bad');
  });
});
