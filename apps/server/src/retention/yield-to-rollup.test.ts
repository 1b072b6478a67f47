import { describe, expect, it } from 'vitest';
import { yieldToRollup } from './retention-scheduler.ts';

// A retention slice waits while the request rollup is far behind (ingest is then close to refusing
// span exports), goes on once it caught up, and never waits past its bound or on a failing rollup.

const lagging = (lags: ({ ms: number; failing: boolean } | null)[]) => {
  let i = 0;
  return { rollupLag: () => lags[Math.min(i++, lags.length - 1)]! };
};

describe('yieldToRollup', () => {
  it('lets a slice start at once while the rollup keeps up, or has no lag to report', async () => {
    const started = performance.now();
    await yieldToRollup(lagging([{ ms: 1000, failing: false }]), 15_000, 10_000, 5)();
    await yieldToRollup(lagging([null]), 15_000, 10_000, 5)();
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('holds a slice while the rollup is more than a third of the bound behind, until it catches up', async () => {
    const source = lagging([
      { ms: 12_000, failing: false },
      { ms: 9_000, failing: false },
      { ms: 6_000, failing: false },
      { ms: 4_000, failing: false },
    ]);
    let asked = 0;
    const counting = {
      rollupLag: () => {
        asked++;
        return source.rollupLag();
      },
    };
    await yieldToRollup(counting, 15_000, 10_000, 5)();
    expect(asked).toBe(4);
  });

  it('does not hold retention up behind a failing rollup, nor past its longest wait', async () => {
    let asked = 0;
    await yieldToRollup(
      {
        rollupLag: () => {
          asked++;
          return { ms: 60_000, failing: true };
        },
      },
      15_000,
      10_000,
      5,
    )();
    expect(asked).toBe(1);
    const started = performance.now();
    await yieldToRollup(lagging([{ ms: 60_000, failing: false }]), 15_000, 100, 5)();
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(95);
    expect(waited).toBeLessThan(5000);
  });

  it('ends the wait when retention is stopped (shutdown must not wait for the rollup)', async () => {
    const stop = new AbortController();
    const started = performance.now();
    const wait = yieldToRollup(lagging([{ ms: 60_000, failing: false }]), 15_000, 60_000, 5, stop.signal)();
    setTimeout(() => stop.abort(), 50);
    await wait;
    expect(performance.now() - started).toBeLessThan(30_000);
  });
});
