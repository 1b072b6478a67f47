import { describe, expect, it } from 'vitest';
import { type RunCostModel, createRunCostModel } from './run-cost-model.ts';

const HALF_LIFE_MS = 60_000;
/** A rollup whose runs cost `fixedMs` plus `perSpanMs` a span. */
const costOf = (fixedMs: number, perSpanMs: number) => (spans: number) => fixedMs + perSpanMs * spans;

/** Observes a run of each size, `stepMs` apart from `startMs`, each costing `cost(size)`. */
function observeRuns(
  model: RunCostModel,
  sizes: number[],
  cost: (spans: number) => number,
  startMs = 0,
  stepMs = 1000,
): void {
  for (const [i, spans] of sizes.entries()) model.observe(spans, cost(spans), startMs + i * stepMs);
}

describe('the rollup run cost model', () => {
  it('predicts nothing before a run was observed', () => {
    expect(createRunCostModel(HALF_LIFE_MS).predictMs(1000)).toBeNull();
  });

  it('charges a large backlog the fixed cost once, not once per small run it would have made', () => {
    const cost = costOf(140, 0.02);
    const model = createRunCostModel(HALF_LIFE_MS);
    // Small runs while the rollup keeps up, as reads trigger them.
    const sizes = [800, 2500, 1200, 4000, 3000, 1500, 5000, 2000];
    observeRuns(model, sizes, cost, 0, 500);
    const backlog = 200_000;
    const predicted = model.predictMs(backlog)!;
    expect(predicted).toBeCloseTo(cost(backlog), 0);
    // The single speed (total ms over total spans) would have said several times as much.
    const totalMs = sizes.reduce((n, s) => n + cost(s), 0);
    const totalSpans = sizes.reduce((n, s) => n + s, 0);
    expect((totalMs / totalSpans) * backlog).toBeGreaterThan(2 * predicted);
  });

  it('grows with the spans waiting, so a rollup that falls behind shows', () => {
    const model = createRunCostModel(HALF_LIFE_MS);
    observeRuns(model, [1000, 10_000, 40_000], costOf(140, 0.02));
    const predictions = [1000, 10_000, 100_000, 1_000_000].map((n) => model.predictMs(n)!);
    for (let i = 1; i < predictions.length; i++) expect(predictions[i]!).toBeGreaterThan(predictions[i - 1]!);
  });

  it('counts the fixed cost once per run a backlog needs', () => {
    const model = createRunCostModel(HALF_LIFE_MS, 100_000);
    observeRuns(model, [1000, 10_000, 40_000], costOf(140, 0.02));
    expect(model.predictMs(300_000)!).toBeCloseTo(3 * 140 + 0.02 * 300_000, 0);
  });

  it('falls back to the plain ratio while the runs were all about one size', () => {
    const model = createRunCostModel(HALF_LIFE_MS);
    for (let i = 0; i < 5; i++) model.observe(2000 + i * 10, 200, 0);
    const ratio = (5 * 200) / (5 * 2000 + 100);
    expect(model.predictMs(100_000)!).toBeCloseTo(ratio * 100_000, 3);
  });

  it('follows the rollup when it slows down: older runs count less', () => {
    const model = createRunCostModel(HALF_LIFE_MS);
    const fast = costOf(100, 0.01);
    const slow = costOf(100, 0.05);
    observeRuns(model, [1000, 20_000, 5000, 40_000], fast);
    const before = model.predictMs(100_000)!;
    // Five minutes later (five half-lives) the same sizes cost five times as much per span.
    observeRuns(model, [1000, 20_000, 5000, 40_000], slow, 300_000);
    const after = model.predictMs(100_000)!;
    expect(before).toBeCloseTo(fast(100_000), -1);
    expect(after).toBeGreaterThan(0.9 * slow(100_000));
  });

  it('keeps the conservative ratio when noise makes the fitted line meaningless', () => {
    const model = createRunCostModel(HALF_LIFE_MS);
    // Larger runs that took less time (a loaded machine during the small ones).
    model.observe(1000, 900, 0);
    model.observe(20_000, 300, 0);
    const ratio = (900 + 300) / 21_000;
    expect(model.predictMs(50_000)!).toBeCloseTo(ratio * 50_000, 3);
  });
});
