// @vitest-environment jsdom
import type { Recommendation } from '@governor/conventions';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RecommendationCard } from './RecommendationCard.tsx';

afterEach(cleanup);

function makeRecommendation(
  overrides: Partial<Omit<Recommendation, 'kind' | 'action' | 'previousAction'>> = {},
): Recommendation {
  return {
    id: 'rec-1',
    kind: 'scale',
    target: { pool: 'h100-east' },
    action: { from: 4, to: 6 },
    reason: 'TTFT p95 is queue-bound and above the SLO; more replicas cut the queue.',
    evidence: [
      { signal: 'ttftMs.p95{pool=h100-east}', value: 1800, threshold: 800, window: '5m' },
      { signal: 'engineTimeVsBaseline{pool=h100-east}', value: 1.1, threshold: 1.5, window: '5m' },
    ],
    expectedImpact: { ttftP95Ms: { from: 1800, to: 650 } },
    confidence: 0.82,
    state: 'proposed',
    policy: null,
    createdAt: '2025-01-01T10:00:00Z',
    updatedAt: '2025-01-01T10:00:00Z',
    ...overrides,
  };
}

describe('RecommendationCard', () => {
  it('says what, why and how sure in plain words', () => {
    render(<RecommendationCard recommendation={makeRecommendation()} />);
    expect(screen.getByText('scale 4 → 6 replicas')).toBeTruthy();
    expect(screen.getByText(/queue-bound/)).toBeTruthy();
    expect(screen.getByText('82%')).toBeTruthy();
    expect(screen.getByText('1.80 s')).toBeTruthy();
    expect(screen.getByTestId('recommendation-state').textContent).toBe('Proposed');
  });

  it('says which guard holds a waiting proposal back, and only while it waits', () => {
    const hold = {
      rule: 'no_reversal_in_cooldown' as const,
      why: 'the last decrease is within the cooldown',
    };
    render(<RecommendationCard recommendation={makeRecommendation({ hold })} />);
    expect(screen.getByTestId('rec-hold').textContent).toBe(
      'Held by a guard (no reversal in cooldown): the last decrease is within the cooldown',
    );
    cleanup();
    render(<RecommendationCard recommendation={makeRecommendation({ hold, state: 'rejected' })} />);
    expect(screen.queryByTestId('rec-hold')).toBeNull();
  });

  it('offers approve, apply and reject for a proposal and reports the decision', async () => {
    const onDecide = vi.fn().mockResolvedValue(undefined);
    render(<RecommendationCard recommendation={makeRecommendation()} onDecide={onDecide} />);
    expect(screen.getAllByRole('button').map((b) => b.textContent)).toEqual([
      'Show evidence chart',
      'Approve',
      'Apply now',
      'Reject',
    ]);
    fireEvent.click(screen.getByRole('button', { name: 'Approve' }));
    await waitFor(() => expect(onDecide).toHaveBeenCalledWith('rec-1', 'approve'));
  });

  it('shows the server error where the decision was made', async () => {
    const onDecide = vi.fn().mockRejectedValue(new Error('recommendation rec-1 is applied, not proposed'));
    render(<RecommendationCard recommendation={makeRecommendation()} onDecide={onDecide} />);
    fireEvent.click(screen.getByRole('button', { name: 'Reject' }));
    expect((await screen.findByRole('alert')).textContent).toContain('is applied, not proposed');
  });

  it('has no decision buttons once applied', () => {
    render(
      <RecommendationCard
        recommendation={makeRecommendation({ state: 'applied', appliedAt: '2025-01-01T10:01:00Z' })}
        onDecide={vi.fn()}
      />,
    );
    expect(screen.queryByRole('button', { name: 'Approve' })).toBeNull();
    expect(screen.getByTestId('recommendation-state').textContent).toBe('Applied');
  });
});
