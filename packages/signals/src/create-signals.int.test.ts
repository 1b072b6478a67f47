import type { Store } from '@governor/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  A100_POOL,
  FLEET_CONFIG,
  type FleetScenario,
  H100_POOL,
  buildFleetScenario,
  expectedA100CostUsd,
  expectedGroup,
  expectedH100CostUsd,
} from './fixtures/fleet-scenario.ts';
import { createTempStore, ingest, testConfig } from '../test/store-harness.ts';
import { atMs } from './fixtures/trace-fixtures.ts';
import { type Signals, createSignals } from './create-signals.ts';
import { readSignalValue } from './read-signal-value.ts';
import type { SignalGroupDetail } from './signal-group.ts';

// Signals against a fleet with known answers, written through the OTLP normalizer and the store's
// writer. Percentiles are exact (DuckDB's quantile_cont and the reference use the same linear
// interpolation), so the tolerance is floating-point noise; counts are exact; cost to the cent.

const TOLERANCE_MS = 1e-6;
const WINDOW_MS = 300_000;
const AT_MS = 400_000;

let store: Store;
let close: () => Promise<void>;
let scenario: FleetScenario;
let signals: Signals;

beforeAll(async () => {
  ({ store, close } = await createTempStore());
  scenario = buildFleetScenario();
  await ingest(store, scenario.traces, scenario.metrics);
  signals = createSignals(store, testConfig(FLEET_CONFIG));
});
afterAll(async () => close());

function expectPercentiles(
  actual: { p50: number | null; p95: number | null; p99: number | null },
  expected: (number | null)[],
) {
  expect(actual.p50).toBeCloseTo(expected[0]!, 6);
  expect(actual.p95).toBeCloseTo(expected[1]!, 6);
  expect(actual.p99).toBeCloseTo(expected[2]!, 6);
}

function expectGroupMatches(group: SignalGroupDetail, match: Parameters<typeof expectedGroup>[3]) {
  const e = expectedGroup(scenario, AT_MS - WINDOW_MS, AT_MS, match);
  expect(group.requests).toBe(e.requests);
  expectPercentiles(group.ttftMs, e.ttft);
  expectPercentiles(group.e2eMs, e.e2e);
  expectPercentiles(group.queueMs, e.queue);
  expect(group.errorRate).toBeCloseTo(e.errorRate!, 12);
  expect(group.overloadRate).toBeCloseTo(e.overloadRate!, 12);
  expect(group.overloadRate!).toBeLessThan(group.errorRate!);
  expect(group.retryRatio).toBeCloseTo(e.retryRatio!, 12);
  expect(group.cacheHitRate).toBeCloseTo(e.cacheHitRate!, 12);
  expect(group.tasks).toBe(e.tasks);
  expect(group.successfulTasks).toBe(e.successfulTasks);
  expect(group.goodTasks).toBe(e.goodTasks);
  expect(group.goodput).toBeCloseTo(e.goodTasks / e.tasks, 12);
  expect(group.tokensPerS).toBeCloseTo(e.tokensPerS, 9);
  for (const hop of ['gateway', 'router', 'queue', 'prefill', 'decode'] as const) {
    expect(Math.abs((group.hops[hop]?.p50 ?? Number.NaN) - e.hops[hop].p50!)).toBeLessThan(TOLERANCE_MS);
    expect(Math.abs((group.hops[hop]?.p95 ?? Number.NaN) - e.hops[hop].p95!)).toBeLessThan(TOLERANCE_MS);
  }
  // The hops of these traces nest exactly, so their shares add up to the whole request.
  const shares = Object.values(group.hops).reduce((s, h) => s + (h.shareOfE2e ?? 0), 0);
  expect(shares).toBeCloseTo(1, 9);
  const ttftShares = Object.values(group.hops).reduce((s, h) => s + (h.shareOfTtft ?? 0), 0);
  expect(ttftShares).toBeCloseTo(1, 9);
  expect(group.hops.decode?.shareOfTtft).toBe(0);
}

describe('signals over a fleet with known answers', () => {
  it('matches the ground truth fleet-wide: latency percentiles, rates, tasks and cost to the cent', async () => {
    const snapshot = await signals.snapshot({ windowMs: WINDOW_MS, by: [], atNs: atMs(AT_MS) });
    expect(snapshot.at).toBe(new Date(Number(atMs(AT_MS) / 1_000_000n)).toISOString());
    expect(snapshot.window).toBe('5m');
    expect(snapshot.groups).toHaveLength(1);
    const fleet = snapshot.groups[0]!;
    expect(fleet.key).toEqual({});
    expectGroupMatches(fleet, () => true);
    const cost =
      expectedH100CostUsd(scenario, AT_MS - WINDOW_MS, AT_MS) +
      expectedA100CostUsd(scenario, AT_MS - WINDOW_MS, AT_MS);
    expect(fleet.costUsd!.toFixed(2)).toBe(cost.toFixed(2));
    expect(fleet.costUsd).toBeCloseTo(cost, 9);
    expect(fleet.successPerDollar).toBeCloseTo(fleet.successfulTasks / cost, 9);
    expect(fleet.costPerSuccessfulTaskUsd).toBeCloseTo(cost / fleet.successfulTasks, 9);
    // No runtime reported server-side TTFT: no data is null, never 0.
    expect(fleet.serverTtftMs).toEqual({ p50: null, p95: null, p99: null });
    expect(fleet.preemptionRate).toBe(0);
  });

  it('matches the ground truth per pool, with replica-time cost and replicas', async () => {
    const snapshot = await signals.snapshot({ windowMs: WINDOW_MS, by: ['pool'], atNs: atMs(AT_MS) });
    expect(snapshot.groups.map((g) => g.key)).toEqual([{ pool: H100_POOL }, { pool: A100_POOL }]);
    const [h100, a100] = snapshot.groups as [SignalGroupDetail, SignalGroupDetail];
    expectGroupMatches(h100, (r) => r.spec.pool === H100_POOL);
    expectGroupMatches(a100, (r) => r.spec.pool === A100_POOL);
    expect(h100.costUsd!.toFixed(2)).toBe(expectedH100CostUsd(scenario, AT_MS - WINDOW_MS, AT_MS).toFixed(2));
    expect(h100.costUsd).toBeCloseTo(expectedH100CostUsd(scenario, AT_MS - WINDOW_MS, AT_MS), 9);
    expect(a100.costUsd).toBeCloseTo(expectedA100CostUsd(scenario, AT_MS - WINDOW_MS, AT_MS), 9);
    // Gauge: 2 replicas until 240 s, 3 after — time-weighted over (100 s, 400 s].
    expect(h100.replicas).toBeCloseTo((2 * 140 + 3 * 160) / 300, 9);
    expect(a100.replicas).toBe(3);
    // No KV-cache data and no peak throughput: utilization is unknown, not 0.
    expect(h100.memoryUtil).toBeNull();
    expect(h100.utilizationRatio).toBeNull();
  });

  it('allocates fleet cost to tenants by GPU-time share, adding up to the fleet cost', async () => {
    const [byTenant, fleet] = await Promise.all([
      signals.snapshot({ windowMs: WINDOW_MS, by: ['tenant'], atNs: atMs(AT_MS) }),
      signals.snapshot({ windowMs: WINDOW_MS, by: [], atNs: atMs(AT_MS) }),
    ]);
    expect(byTenant.groups.map((g) => g.key.tenant)).toEqual(['acme', 'globex']);
    const total = byTenant.groups.reduce((s, g) => s + (g.costUsd ?? 0), 0);
    expect(total).toBeCloseTo(fleet.groups[0]!.costUsd!, 9);
    // Replicas and utilization belong to pools, not tenants.
    expect(byTenant.groups.every((g) => g.replicas === null && g.memoryUtil === null)).toBe(true);
    const acme = byTenant.groups[0]!;
    expectGroupMatches(acme, (r) => r.spec.tenant === 'acme');
  });

  it('gives the same answers from a raw scan of spans as from the incremental rollup', async () => {
    const raw = createSignals(store, testConfig(FLEET_CONFIG), { source: 'raw' });
    const [a, b] = await Promise.all([
      signals.snapshot({ windowMs: WINDOW_MS, by: ['pool', 'tenant'], atNs: atMs(AT_MS) }),
      raw.snapshot({ windowMs: WINDOW_MS, by: ['pool', 'tenant'], atNs: atMs(AT_MS) }),
    ]);
    expect(b.groups.map((g) => g.key)).toEqual(a.groups.map((g) => g.key));
    for (const [i, group] of a.groups.entries()) {
      for (const path of [
        'requests',
        'ttftMs.p95',
        'e2eMs.p99',
        'errorRate',
        'tasks',
        'successfulTasks',
        'costUsd',
        'hops.queue.shareOfE2e',
      ]) {
        expect(readSignalValue(b.groups[i]!, path)).toBeCloseTo(readSignalValue(group, path)!, 9);
      }
    }
  });

  it('filters to one dimension value', async () => {
    const snapshot = await signals.snapshot({
      windowMs: WINDOW_MS,
      by: ['pool'],
      atNs: atMs(AT_MS),
      filter: { tenant: 'globex' },
    });
    expect(snapshot.groups.map((g) => g.key.pool)).toEqual([H100_POOL, A100_POOL]);
    expectGroupMatches(snapshot.groups[0]!, (r) => r.spec.pool === H100_POOL && r.spec.tenant === 'globex');
  });

  it('groups and filters by dimensions only the pool config supplies', async () => {
    // The H100 pool's spans name no model, region or GPU type: its config entry does.
    const byGpu = await signals.snapshot({ windowMs: WINDOW_MS, by: ['gpu_type'], atNs: atMs(AT_MS) });
    expect(byGpu.groups.map((g) => g.key)).toEqual([{ gpu_type: 'A100' }, { gpu_type: 'H100' }]);
    expectGroupMatches(byGpu.groups[1]!, (r) => r.spec.pool === H100_POOL);
    const east = await signals.snapshot({
      windowMs: WINDOW_MS,
      by: ['model'],
      atNs: atMs(AT_MS),
      filter: { region: 'us-east' },
    });
    expect(east.groups.map((g) => g.key)).toEqual([{ model: 'llama-3.1-70b' }]);
    expectGroupMatches(east.groups[0]!, (r) => r.spec.pool === H100_POOL);
  });

  it('defaults `at` to the watermark: newest event time minus the lateness', async () => {
    const newest = Math.max(...scenario.requests.map((r) => r.truth.endMs));
    expect(await signals.watermarkNs()).toBe(atMs(newest) - 10_000_000_000n);
    const snapshot = await signals.snapshot({ windowMs: 60_000, by: [] });
    expect(snapshot.at).toBe(new Date(Number((atMs(newest) - 10_000_000_000n) / 1_000_000n)).toISOString());
  });

  it('returns series whose points equal snapshots of each step', async () => {
    const fromNs = atMs(100_000);
    const series = await signals.series({
      signal: 'ttftMs.p95',
      by: ['pool'],
      fromNs,
      toNs: atMs(400_000),
      stepMs: 100_000,
    });
    expect(series.step).toBe('1m40s');
    expect(series.series.map((s) => s.key)).toEqual([{ pool: H100_POOL }, { pool: A100_POOL }]);
    const h100 = series.series[0]!;
    expect(h100.points.map((p) => p.t)).toEqual(
      [200_000, 300_000, 400_000].map((ms) => new Date(Number(atMs(ms) / 1_000_000n)).toISOString()),
    );
    for (const [i, point] of h100.points.entries()) {
      const snap = await signals.snapshot({
        windowMs: 100_000,
        by: ['pool'],
        atNs: atMs(200_000 + i * 100_000),
      });
      expect(point.v).toBeCloseTo(snap.groups.find((g) => g.key.pool === H100_POOL)!.ttftMs.p95!, 9);
    }
  });

  it('answers an empty window with nulls, not zeros', async () => {
    const snapshot = await signals.snapshot({ windowMs: WINDOW_MS, by: [], atNs: atMs(-3_600_000) });
    const fleet = snapshot.groups[0]!;
    expect(fleet.requests).toBe(0);
    expect(fleet.tasks).toBe(0);
    expect(fleet.ttftMs).toEqual({ p50: null, p95: null, p99: null });
    expect(fleet.e2eMs.p50).toBeNull();
    for (const v of [
      fleet.errorRate,
      fleet.retryRatio,
      fleet.goodput,
      fleet.cacheHitRate,
      fleet.costUsd,
      fleet.successPerDollar,
      fleet.costPerSuccessfulTaskUsd,
      fleet.replicas,
      fleet.utilizationRatio,
    ]) {
      expect(v).toBeNull();
    }
    expect(fleet.hops).toEqual({});
    const byPool = await signals.snapshot({ windowMs: WINDOW_MS, by: ['pool'], atNs: atMs(-3_600_000) });
    expect(byPool.groups).toEqual([]);
  });
});
