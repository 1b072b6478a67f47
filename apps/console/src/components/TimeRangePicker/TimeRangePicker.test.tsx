// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { resolveTimeRange } from '../../lib/time-range.ts';
import { TimeRangePicker } from './TimeRangePicker.tsx';

afterEach(cleanup);

const anchor = Date.parse('2025-03-01T12:00:00Z');

describe('TimeRangePicker', () => {
  it('writes a preset to the URL patch', () => {
    const onChange = vi.fn();
    render(<TimeRangePicker range={resolveTimeRange({ range: '15m' }, anchor)} onChange={onChange} />);
    fireEvent.change(screen.getByLabelText('Time range'), { target: { value: '6h' } });
    expect(onChange).toHaveBeenCalledWith({ range: '6h', from: null, to: null });
  });

  it('applies an absolute range and refuses one that ends before it starts', () => {
    const onChange = vi.fn();
    render(<TimeRangePicker range={resolveTimeRange({ range: '15m' }, anchor)} onChange={onChange} />);
    fireEvent.change(screen.getByLabelText('Time range'), { target: { value: 'custom' } });
    const from = screen.getByLabelText('From');
    const to = screen.getByLabelText('To');
    fireEvent.change(from, { target: { value: '2025-03-01T10:00:00' } });
    fireEvent.change(to, { target: { value: '2025-03-01T09:00:00' } });
    fireEvent.click(screen.getByRole('button', { name: 'Apply' }));
    expect(screen.getByRole('alert').textContent).toContain('after');
    expect(onChange).not.toHaveBeenCalled();
    fireEvent.change(to, { target: { value: '2025-03-01T11:00:00' } });
    fireEvent.click(screen.getByRole('button', { name: 'Apply' }));
    const patch = onChange.mock.calls[0]![0];
    expect(patch.range).toBeNull();
    expect(Date.parse(patch.to) - Date.parse(patch.from)).toBe(3_600_000);
  });
});
