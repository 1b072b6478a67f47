import { createHopClassifier, normalizeMetricsRequest, normalizeTraceRequest } from '@governor/otlp';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempStore, testConfig } from '../../test/store-harness.ts';
import { createSignals } from '../create-signals.ts';
import { atMs, chatRequest, gaugeExport, traceExport } from '../fixtures/trace-fixtures.ts';

// A listed task's cost is its requests' share of their pool's cost. Under head sampling a stored
// request stands for 1 ÷ p requests, so the pool's usage that the share is taken of must count the
// fleet's requests, not the sample's — as the signals' own cost allocation does — or every sampled
// task is charged 1 ÷ p times its cost.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const CONFIG = testConfig({
  signals: { lateness_ms: 0 },
  pricing: { gpu_hour_usd: { H100: 3.6 } },
  pools: [{ name: 'a', gpu_type: 'H100' }],
});
const classifier = createHopClassifier();

async function listedCost(
  sampleWeight: number | null,
): Promise<{ tasks: number; listed: number; pool: number }> {
  const { store, close } = await createTempStore();
  cleanups.push(close);
  const spans = Array.from({ length: 12 }, (_, i) =>
    normalizeTraceRequest(
      traceExport(
        `t${i}`,
        chatRequest({
          trace: `t${i}`,
          startMs: 5_000 + i * 10_000,
          queueMs: 3,
          prefillMs: 20 + i,
          decodeMs: 300 + 20 * i,
          pool: 'a',
          inputTokens: 200 + i,
          outputTokens: 60 + i,
        }).spans,
      ),
      { classifier, aliases: {} },
    ).rows.map((r) => ({ ...r, sampleWeight })),
  ).flat();
  const gauge = normalizeMetricsRequest(
    gaugeExport([
      {
        name: 'governor.pool.replicas',
        pool: 'a',
        points: Array.from({ length: 5 }, (_, i) => ({ atMs: i * 30_000, value: 2 })),
      },
    ]),
    {},
  ).rows;
  await store.writer.write(spans, gauge);
  const signals = createSignals(store, CONFIG);
  const toNs = atMs(130_000);
  const tasks = await signals.tasks({ toNs, windowMs: 130_000, limit: 100 });
  const listed = tasks.flatMap((t) => t.attempts).reduce((sum, a) => sum + (a.costUsd ?? 0), 0);
  // The pool's cost over the window the tasks' shares are taken in (from the window's start: no
  // listed task starts before it).
  const [pool] = (await signals.snapshot({ windowMs: 130_000, by: ['pool'], atNs: toNs })).groups;
  return { tasks: tasks.length, listed, pool: pool!.costUsd! };
}

describe('the cost of listed tasks under head sampling', () => {
  it('adds up to the pool’s cost unsampled, and to the sampled share of it when 1 in 10 is kept', async () => {
    const full = await listedCost(null);
    expect(full.tasks).toBe(12);
    expect(full.pool).toBeGreaterThan(0);
    expect(full.listed).toBeCloseTo(full.pool, 9);
    const sampled = await listedCost(10);
    expect(sampled.tasks).toBe(12);
    // The same pool cost; the twelve stored tasks stand for a tenth of the traffic that paid for it.
    expect(sampled.pool).toBeCloseTo(full.pool, 9);
    expect(sampled.listed).toBeCloseTo(full.pool / 10, 9);
  });
});
