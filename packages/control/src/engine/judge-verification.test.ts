import { describe, expect, test } from 'vitest';
import type { RecommendationRecord, ScopeMetrics } from './control-types.ts';
import { DEFAULT_TUNING } from './control-tuning.ts';
import { judgeVerification } from './judge-verification.ts';
import { calmErrorRate, collapseShare, errorBudget } from '../objective/operating-bounds.ts';

const metrics = (m: Partial<ScopeMetrics>): ScopeMetrics => ({
  requests: 200,
  goodput: 0.95,
  errorRate: 0.01,
  ttftP95Ms: 900,
  queueP95Ms: 50,
  costUsd: 10,
  successPerDollar: 20,
  ...m,
});
const rec = (kind: RecommendationRecord['kind'], direction: 'increase' | 'decrease') =>
  ({ kind, direction }) as RecommendationRecord;
const slo = { ttft_ms: 2000 };
const control = { slo_attainment_target: 0.95 };
const bounds = {
  errorBudget: errorBudget(control),
  collapse: collapseShare(control, DEFAULT_TUNING),
  calm: calmErrorRate(control, DEFAULT_TUNING),
};

describe('verification: roll back only harm the action could cause', () => {
  test('a scale-in that breaks the SLO is rolled back; one that holds it is kept', () => {
    const broke = judgeVerification(
      rec('scale', 'decrease'),
      metrics({}),
      metrics({ ttftP95Ms: 2600 }),
      slo,
      20,
      bounds,
    );
    expect(broke.verdict).toBe('rolled_back');
    expect(broke.summary).toMatch(/could not hold the SLO/);
    expect(
      judgeVerification(rec('scale', 'decrease'), metrics({}), metrics({ ttftP95Ms: 1500 }), slo, 20, bounds)
        .verdict,
    ).toBe('verified');
  });

  test('a scale-in is held to its prediction: the loss the replay foresaw is kept, more than that is not', () => {
    const predicted = (from: number, to: number) =>
      ({
        kind: 'scale',
        direction: 'decrease',
        expectedImpact: { withinSloShare: { from, to } },
      }) as unknown as RecommendationRecord;
    const before = metrics({ requests: 2000, goodput: 0.99 });
    const after = metrics({ requests: 2000, goodput: 0.955 });
    // 3.5 points lost where the replay said 2.5: within noise of the prediction.
    expect(judgeVerification(predicted(0.99, 0.965), before, after, slo, 20, bounds).verdict).toBe(
      'verified',
    );
    // The same loss where the replay said none: the prediction failed.
    const failed = judgeVerification(predicted(0.99, 0.99), before, after, slo, 20, bounds);
    expect(failed.verdict).toBe('rolled_back');
    // Monotone: the larger the loss beyond the prediction, never less likely to roll back.
    let rolledBack = false;
    for (let g = 0.99; g >= 0.8; g -= 0.005) {
      const v = judgeVerification(
        predicted(0.99, 0.97),
        before,
        metrics({ requests: 2000, goodput: g }),
        slo,
        20,
        bounds,
      );
      if (rolledBack) expect(v.verdict).toBe('rolled_back');
      rolledBack ||= v.verdict === 'rolled_back';
    }
    expect(rolledBack).toBe(true);
  });

  test('a scale-up is kept when it only added cost, rolled back when its replicas fail requests', () => {
    const pricier = metrics({ successPerDollar: 10 });
    expect(judgeVerification(rec('scale', 'increase'), metrics({}), pricier, slo, 20, bounds).verdict).toBe(
      'verified',
    );
    const failing = metrics({ goodput: 0.8, errorRate: 0.1 });
    expect(judgeVerification(rec('scale', 'increase'), metrics({}), failing, slo, 20, bounds).verdict).toBe(
      'rolled_back',
    );
    // The same, with the pool's traffic up 5× since (moved onto it from a failing peer): its load.
    const surged = judgeVerification(rec('scale', 'increase'), metrics({}), failing, slo, 20, bounds, 5);
    expect(surged.verdict).toBe('verified');
    expect(surged.summary).toMatch(/requests per second rose 5× since/);
    expect(
      judgeVerification(rec('scale', 'increase'), metrics({}), failing, slo, 20, bounds, 1.2).verdict,
    ).toBe('rolled_back');
  });

  test('a breaker that cut goodput without reducing errors is rolled back', () => {
    const before = metrics({ errorRate: 0.05 });
    expect(
      judgeVerification(
        rec('circuit_break', 'increase'),
        before,
        metrics({ goodput: 0.85, errorRate: 0.05 }),
        slo,
        20,
        bounds,
      ).verdict,
    ).toBe('rolled_back');
    expect(
      judgeVerification(
        rec('circuit_break', 'increase'),
        before,
        metrics({ goodput: 0.85, errorRate: 0.01 }),
        slo,
        20,
        bounds,
      ).verdict,
    ).toBe('verified');
    // Fewer errors do not excuse a collapse: a fall clearly past the whole error budget.
    const collapsed = metrics({ goodput: 0.7, errorRate: 0.01 });
    expect(
      judgeVerification(rec('circuit_break', 'increase'), before, collapsed, slo, 20, bounds).verdict,
    ).toBe('rolled_back');
    // The bound follows the attainment target: a laxer one (a 15 % budget) tolerates that fall.
    const lax = { slo_attainment_target: 0.85 };
    const laxBounds = {
      errorBudget: errorBudget(lax),
      collapse: collapseShare(lax, DEFAULT_TUNING),
      calm: calmErrorRate(lax, DEFAULT_TUNING),
    };
    expect(
      judgeVerification(rec('circuit_break', 'increase'), before, collapsed, slo, 20, laxBounds).verdict,
    ).toBe('verified');
  });

  test('a retry budget is judged by goodput: refused retries that raise the error rate are no harm while goodput rises', () => {
    const storm = metrics({ goodput: 0.69, errorRate: 0.31 });
    const calmer = metrics({ goodput: 0.85, errorRate: 0.43 });
    expect(judgeVerification(rec('retry_budget', 'increase'), storm, calmer, slo, 20, bounds).verdict).toBe(
      'verified',
    );
    const worse = metrics({ goodput: 0.6, errorRate: 0.43 });
    const judged = judgeVerification(rec('retry_budget', 'increase'), storm, worse, slo, 20, bounds);
    expect(judged.verdict).toBe('rolled_back');
    expect(judged.summary).toMatch(/recoverable failures into failed tasks/);
  });

  test("a shift's predicted goodput is shown beside the measured one, and a gain that falls short is not rolled back", () => {
    const shift = {
      kind: 'shift_traffic',
      direction: 'decrease',
      expectedImpact: { withinSloShare: { from: 0.7, to: 0.9 } },
    } as unknown as RecommendationRecord;
    const before = metrics({ requests: 500, goodput: 0.7, errorRate: 0.2 });
    // Better than before, short of the prediction: the move helped, and taking it back would not.
    const judged = judgeVerification(
      shift,
      before,
      metrics({ requests: 500, goodput: 0.8, errorRate: 0.1 }),
      slo,
      20,
      bounds,
    );
    expect(judged.verdict).toBe('verified');
    expect(judged.summary).toMatch(/goodput 0\.7 → 0\.8 \(predicted 0\.9\)/);
    // Without a prediction, nothing is claimed.
    const unpredicted = judgeVerification(
      rec('shift_traffic', 'decrease'),
      before,
      metrics({ requests: 500, goodput: 0.8 }),
      slo,
      20,
      bounds,
    );
    expect(unpredicted.summary).not.toMatch(/predicted/);
  });

  test('too little traffic since the action is not evidence of harm', () => {
    const quiet = metrics({ requests: 3, goodput: 0.2 });
    expect(judgeVerification(rec('shed_load', 'increase'), metrics({}), quiet, slo, 20, bounds).verdict).toBe(
      'verified',
    );
  });
});
