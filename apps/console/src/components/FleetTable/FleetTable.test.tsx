// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { makeGroup } from '../../test-support/make-group.ts';
import { FleetTable } from './FleetTable.tsx';

afterEach(cleanup);

describe('FleetTable', () => {
  const groups = [
    makeGroup({
      key: { pool: 'h100-east', gpu_type: 'H100' },
      utilizationRatio: 1.5,
      memoryUtil: 0.9,
      computeUtil: 0.6,
    }),
    makeGroup({
      key: { pool: 'a100-west', gpu_type: 'A100' },
      utilizationRatio: 0.5,
      ttftMs: { p50: 1, p95: 950, p99: 1 },
    }),
    makeGroup({ key: { pool: 'l4-spare' }, utilizationRatio: 1.0 }),
  ];

  it('labels memory- and compute-bound pools and marks SLO breaches', () => {
    render(
      <FleetTable
        groups={groups}
        slo={{ ttftMs: 800, e2eMs: null }}
        selectedPool={null}
        onSelectPool={() => {}}
      />,
    );
    const rows = screen.getAllByRole('row').slice(1);
    expect(rows.map((r) => within(r).getByRole('button').textContent)).toEqual([
      'a100-west',
      'h100-east',
      'l4-spare',
    ]);
    expect(within(rows[1]!).getByTestId('bound-label').textContent).toBe('memory-bound');
    expect(within(rows[0]!).getByTestId('bound-label').textContent).toBe('compute-bound');
    expect(within(rows[2]!).queryByTestId('bound-label')).toBeNull();
    expect(within(rows[0]!).getByText('SLO breach')).toBeTruthy();
    expect(within(rows[1]!).getByText('Healthy')).toBeTruthy();
    expect(within(rows[0]!).getByText('950 ms').className).toContain('is-bad');
  });

  it('selects and clears a pool with the keyboard-reachable pool button', () => {
    const onSelect = vi.fn();
    const { rerender } = render(
      <FleetTable
        groups={groups}
        slo={{ ttftMs: null, e2eMs: null }}
        selectedPool={null}
        onSelectPool={onSelect}
      />,
    );
    fireEvent.click(screen.getByRole('button', { name: 'h100-east' }));
    expect(onSelect).toHaveBeenLastCalledWith('h100-east');
    rerender(
      <FleetTable
        groups={groups}
        slo={{ ttftMs: null, e2eMs: null }}
        selectedPool="h100-east"
        onSelectPool={onSelect}
      />,
    );
    const button = screen.getByRole('button', { name: 'h100-east' });
    expect(button.getAttribute('aria-pressed')).toBe('true');
    fireEvent.click(button);
    expect(onSelect).toHaveBeenLastCalledWith(null);
  });

  it('shows a dash, never 0, for a value without data', () => {
    render(
      <FleetTable
        groups={[makeGroup({ successPerDollar: null, goodput: null })]}
        slo={{ ttftMs: null, e2eMs: null }}
        selectedPool={null}
        onSelectPool={() => {}}
      />,
    );
    const cells = screen.getAllByRole('cell');
    expect(cells.filter((c) => c.textContent === '—').length).toBeGreaterThanOrEqual(2);
  });
});
