import { describe, expect, it } from 'vitest';
import { startOtlpReceiver } from '../test/start-otlp-receiver.ts';
import { createDefaultFleet } from './fleet/fleet-spec.ts';
import { runSimulation } from './run-simulation.ts';

describe('determinism', () => {
  it('gives the same summary and the same trace and span ids for the same seed', async () => {
    const receiver = await startOtlpReceiver();
    try {
      const options = {
        workload: 'synthetic-mix',
        durationMs: 8 * 60_000,
        scenario: 'gpu-degradation',
        policy: 'hpa',
      } as const;
      // Everything sent, ids, resources and attributes included, in a canonical order.
      const telemetryOf = () => ({
        spans: receiver.spans
          .map((s) => JSON.stringify(s, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)))
          .sort(),
        points: receiver.points
          .map((p) => JSON.stringify(p, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)))
          .sort(),
      });
      const first = await runSimulation({ ...options, seed: 11, target: receiver.url });
      const firstIds = receiver.spans.map((s) => `${s.traceId}/${s.spanId}/${s.startNs}/${s.endNs}`).sort();
      const firstTelemetry = telemetryOf();
      receiver.spans.length = 0;
      receiver.points.length = 0;
      const second = await runSimulation({ ...options, seed: 11, target: receiver.url });
      const secondIds = receiver.spans.map((s) => `${s.traceId}/${s.spanId}/${s.startNs}/${s.endNs}`).sort();
      expect(second).toEqual(first);
      expect(secondIds).toEqual(firstIds);
      expect(firstIds.length).toBeGreaterThan(1000);
      const secondTelemetry = telemetryOf();
      expect(secondTelemetry.points.length).toBeGreaterThan(1000);
      expect(secondTelemetry).toEqual(firstTelemetry);

      receiver.spans.length = 0;
      await runSimulation({ ...options, seed: 12, target: receiver.url });
      const otherIds = new Set(receiver.spans.map((s) => s.spanId));
      expect(firstIds.filter((id) => otherIds.has(id.split('/')[1]!))).toHaveLength(0);
    } finally {
      await receiver.close();
    }
  });

  it('gives the same summary with and without telemetry (telemetry does not perturb the model)', async () => {
    const receiver = await startOtlpReceiver();
    try {
      const options = { workload: 'azure-code', durationMs: 5 * 60_000, seed: 5 } as const;
      const withTelemetry = await runSimulation({ ...options, target: receiver.url });
      const without = await runSimulation(options);
      expect({ ...withTelemetry, telemetry: null }).toEqual(without);
      const governorShapes = await runSimulation({
        ...options,
        target: receiver.url,
        governorAttributes: true,
      });
      expect({ ...governorShapes, telemetry: null }).toEqual(without);
    } finally {
      await receiver.close();
    }
  });
});

describe('summary ground truth', () => {
  it('prices a fixed fleet exactly: replicas × GPUs × $/GPU-hour × simulated time', async () => {
    const fleet = createDefaultFleet();
    const summary = await runSimulation({ workload: 'azure-conv', durationMs: 15 * 60_000, fleet });
    const hours = summary.simDurationS / 3600;
    const expected = fleet.pools.reduce(
      (sum, p) => sum + p.replicas * p.gpusPerReplica * p.gpuHourUsd * hours,
      0,
    );
    expect(summary.costUsd).toBeCloseTo(expected, 2);
    expect(summary.gpuHours).toBeCloseTo(
      fleet.pools.reduce((s, p) => s + p.replicas * p.gpusPerReplica * hours, 0),
      4,
    );
    expect(summary.successPerDollar).toBeCloseTo(summary.successfulTasks / summary.costUsd, 4);
    for (const pool of summary.pools) {
      const spec = fleet.pools.find((p) => p.name === pool.pool)!;
      expect(pool.replicasAvg).toBeCloseTo(spec.replicas, 6);
    }
  });

  it('counts tasks, requests and outcomes consistently', async () => {
    const s = await runSimulation({
      workload: 'azure-conv',
      durationMs: 10 * 60_000,
      scenario: 'retry-storm',
    });
    expect(s.requests).toBe(s.successes + s.errors + s.rejected + s.cancelled);
    expect(s.successfulTasks).toBeLessThanOrEqual(s.tasks);
    expect(s.tasksWithinSlo).toBeLessThanOrEqual(s.successfulTasks);
    expect(s.goodput).toBeCloseTo(s.tasksWithinSlo / s.tasks, 6);
    expect(s.retries).toBeGreaterThan(0);
    expect(s.pools.reduce((sum, p) => sum + p.requests, 0)).toBeLessThanOrEqual(s.requests);
    expect(s.ttftMs.p50!).toBeLessThanOrEqual(s.ttftMs.p95!);
    expect(s.ttftMs.p95!).toBeLessThanOrEqual(s.ttftMs.p99!);
  });
});
