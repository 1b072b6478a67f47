import { createDefaultFleet, runSimulation } from '@governor/simulator';
import type { RunSummary } from '@governor/simulator';
import type { SignalGroupDetail } from '@governor/signals';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRfc3339Ns } from './signals-query.ts';
import { type TestGovernor, startTestGovernor } from '../otlp/start-test-governor.ts';

// The simulator's fleet, traced with the real OpenTelemetry SDK and exported over OTLP/HTTP to a
// real Governor, against the simulator's own ground truth: request and task counts exactly,
// latency percentiles to 0.01 ms, cost to the cent — with the shapes a real fleet sends (the
// default) and with Governor's own attributes, which also declare workflow steps and attempts.
//
// What real shapes cannot tell is not asserted for them: a conversation declares no step count, so
// the ones still active at the watermark are pending rather than counted. A client's retry is a new
// trace to the gateway; the OpenAI SDK's x-stainless-retry-count header, as the gateway captured it,
// says it is one.

const fleet = createDefaultFleet();

describe.each([
  { shapes: 'real', governorAttributes: false },
  { shapes: 'governor.*', governorAttributes: true },
])('signals against the simulator’s ground truth ($shapes shapes)', ({ governorAttributes }) => {
  let t: TestGovernor;
  let summary: RunSummary;

  beforeAll(async () => {
    t = await startTestGovernor({
      control: { enabled: false },
      pricing: { gpu_hour_usd: Object.fromEntries(fleet.pools.map((p) => [p.gpuType, p.gpuHourUsd])) },
      pools: fleet.pools.map((p) => ({
        name: p.name,
        gpu_type: p.gpuType,
        gpus_per_replica: p.gpusPerReplica,
      })),
      slo: { ttft_ms: 2000, e2e_ms: 60_000 },
    });
    summary = await runSimulation({
      workload: 'synthetic-mix',
      durationMs: 120_000,
      speed: 'max',
      seed: 3,
      target: t.url,
      startEpochMs: Date.UTC(2026, 0, 1),
      sloTtftMs: 2000,
      sloE2eMs: 60_000,
      governorAttributes,
      log: () => {},
    });
    expect(summary.telemetry?.spansFailed).toBe(0);
  });
  afterAll(async () => {
    await t?.close();
  });

  async function signalsOverTheRun(by: string): Promise<SignalGroupDetail[]> {
    // simEnd is rounded to the millisecond: end the window one millisecond later to include the last request.
    const startNs = parseRfc3339Ns(summary.simStart, 'simStart');
    const atNs = parseRfc3339Ns(summary.simEnd, 'simEnd') + 1_000_000n;
    const at = new Date(Number(atNs / 1_000_000n)).toISOString();
    const response = await fetch(
      `${t.url}/api/signals?window=${Number(atNs - startNs) / 1e6}ms&by=${by}&at=${at}`,
    );
    expect(response.status).toBe(200);
    return ((await response.json()) as { groups: SignalGroupDetail[] }).groups;
  }

  it('counts requests, errors, retries and tasks exactly and matches latency percentiles', async () => {
    const [fleetGroup] = await signalsOverTheRun('');
    const g = fleetGroup!;
    expect(g.requests).toBe(summary.requests);
    expect(g.errorRate! * g.requests).toBeCloseTo(
      summary.errors + summary.timeouts + summary.preempted + summary.rejected,
      9,
    );
    expect(summary.retries).toBeGreaterThan(0);
    expect(g.retries).toBe(summary.retries);
    if (governorAttributes) {
      expect(g.tasks).toBe(summary.tasks);
      expect(g.successfulTasks).toBe(summary.successfulTasks);
      expect(g.goodTasks).toBe(summary.tasksWithinSlo);
    } else {
      expect(g.tasks + g.pendingTasks).toBe(summary.tasks);
      expect(g.successfulTasks).toBeLessThanOrEqual(summary.successfulTasks);
      expect(g.successfulTasks).toBeGreaterThanOrEqual(summary.successfulTasks - g.pendingTasks);
    }
    for (const q of ['p50', 'p95', 'p99'] as const) {
      expect(Math.abs(g.ttftMs[q]! - summary.ttftMs[q]!)).toBeLessThan(0.01);
      expect(Math.abs(g.e2eMs[q]! - summary.e2eMs[q]!)).toBeLessThan(0.01);
    }
  });

  it('matches the fleet and per-pool cost to the cent, and success per dollar', async () => {
    const [fleetGroup] = await signalsOverTheRun('');
    expect(fleetGroup!.costUsd!.toFixed(2)).toBe(summary.costUsd.toFixed(2));
    if (governorAttributes) expect(fleetGroup!.successPerDollar).toBeCloseTo(summary.successPerDollar!, 2);
    else
      expect(fleetGroup!.successPerDollar).toBeCloseTo(fleetGroup!.successfulTasks / fleetGroup!.costUsd!, 9);
    const byPool = await signalsOverTheRun('pool');
    for (const pool of summary.pools) {
      const group = byPool.find((g) => g.key.pool === pool.pool)!;
      expect(group.requests).toBe(pool.requests);
      expect(group.costUsd!.toFixed(2)).toBe(pool.costUsd.toFixed(2));
      expect(group.replicas).toBeCloseTo(pool.replicasAvg, 2);
      expect(Math.abs(group.ttftMs.p95! - pool.ttftMs.p95!)).toBeLessThan(0.01);
    }
  });
});
