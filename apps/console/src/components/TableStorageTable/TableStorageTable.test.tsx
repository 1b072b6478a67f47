// @vitest-environment jsdom
import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { TableStorageTable } from './TableStorageTable.tsx';

afterEach(cleanup);

describe('TableStorageTable', () => {
  it('lists the largest table first, exact rows, and rows not yet checkpointed as in the WAL', () => {
    render(
      <TableStorageTable
        tables={[
          { table: 'retention_runs', rows: 3, bytes: 0 },
          { table: 'span_store', rows: 1_234_567, bytes: 48 * 262_144 },
          { table: 'control_policies', rows: 0, bytes: 0 },
        ]}
      />,
    );
    const rows = screen.getAllByRole('row').slice(1);
    expect(rows.map((r) => r.getAttribute('data-table'))).toEqual([
      'span_store',
      'retention_runs',
      'control_policies',
    ]);
    expect(rows.map((r) => r.querySelector('[data-col="rows"]')?.textContent)).toEqual([
      '1,234,567',
      '3',
      '0',
    ]);
    expect(rows.map((r) => r.querySelector('[data-col="bytes"]')?.textContent)).toEqual([
      '12.0 MiB',
      'in WAL',
      '0 B',
    ]);
    expect(screen.getByRole('rowheader', { name: 'span_store' })).toBeTruthy();
  });
});
