// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { normalizeSpan } from '../../api/traces.ts';
import { TraceWaterfall } from './TraceWaterfall.tsx';

afterEach(cleanup);

const base = 1_700_000_000_000_000_000n;
const ns = (ms: number) => (base + BigInt(ms) * 1_000_000n).toString();

const spans = [
  {
    span_id: 'r',
    parent_span_id: null,
    name: 'gateway.request',
    hop: 'gateway',
    start_ns: ns(0),
    duration_ms: 1000,
    status_code: 0,
    attributes: '{"governor.pool":"h100"}',
    events: '[]',
  },
  {
    span_id: 'q',
    parent_span_id: 'r',
    name: 'scheduler.queue',
    hop: 'scheduler',
    start_ns: ns(10),
    duration_ms: 400,
    status_code: 0,
    attributes: '{}',
    events: JSON.stringify([{ timeNs: ns(300), name: 'first_token', attributes: {} }]),
  },
  {
    span_id: 'd',
    parent_span_id: 'r',
    name: 'decode',
    hop: 'decode',
    start_ns: ns(410),
    duration_ms: 590,
    status_code: 2,
    status_message: 'preempted',
    attributes: '{}',
    events: '[]',
  },
].map(normalizeSpan);

describe('TraceWaterfall', () => {
  it('draws one row per span in tree order with offsets on a shared axis', () => {
    const { container } = render(<TraceWaterfall trace={{ traceId: 't', spans, source: 'sql' }} />);
    const rows = screen.getAllByRole('button');
    expect(rows.map((r) => r.querySelector('.waterfall__label')?.textContent)).toEqual([
      'gateway.request',
      'scheduler.queue',
      'decode',
    ]);
    const bars = [...container.querySelectorAll<HTMLElement>('.waterfall__bar')];
    expect(bars.map((b) => b.style.left)).toEqual(['0%', '1%', '41%']);
    expect(bars[2]!.className).toContain('is-failed');
    expect(container.querySelectorAll('.waterfall__event')).toHaveLength(1);
  });

  it('opens a span to show its attributes and events', () => {
    render(<TraceWaterfall trace={{ traceId: 't', spans, source: 'sql' }} />);
    const first = screen.getAllByRole('button')[0]!;
    fireEvent.click(first);
    expect(first.getAttribute('aria-expanded')).toBe('true');
    const details = screen.getByTestId('span-details');
    expect(within(details).getByText('governor.pool')).toBeTruthy();
    expect(within(details).getByText('h100')).toBeTruthy();
    fireEvent.click(screen.getAllByRole('button')[1]!);
    expect(within(screen.getByTestId('span-details')).getByText('first_token')).toBeTruthy();
  });
});
