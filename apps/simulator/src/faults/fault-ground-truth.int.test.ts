import { Metric } from '@governor/conventions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOtlpReceiver } from '../../test/start-otlp-receiver.ts';
import type { OtlpReceiver, ReceivedPoint, ReceivedSpan } from '../../test/start-otlp-receiver.ts';
import { runSimulation } from '../run-simulation.ts';
import type { RunSummary } from '../summary/run-summary.ts';
import type { ScenarioName } from './fault-plan.ts';

// Each fault's ground truth (kind, target, window in the summary) must be visible in what the
// fleet emits — that is what Governor's signals are tested against.

const ROOT = 'POST /v1/chat/completions';
const POOL = 'llama8b-h100-east';
const nsOf = (iso: string) => BigInt(Date.parse(iso)) * 1_000_000n;

interface FaultRun {
  summary: RunSummary;
  spans: ReceivedSpan[];
  points: ReceivedPoint[];
  startNs: bigint;
  endNs: bigint;
}

let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(() => receiver.close());

async function runFault(
  scenario: ScenarioName,
  workload: 'azure-conv' | 'synthetic-chat' = 'azure-conv',
): Promise<FaultRun> {
  receiver.spans.length = 0;
  receiver.points.length = 0;
  const summary = await runSimulation({
    workload,
    scenario,
    durationMs: 16 * 60_000,
    faultStartMs: 4 * 60_000,
    faultDurationMs: 6 * 60_000,
    target: receiver.url,
    seed: 2,
    // The ground truth is read from the governor.* attributes that name pool, replica and outcome.
    governorAttributes: true,
  });
  const fault = summary.faults[0]!;
  expect(fault.kind).toBe(scenario);
  return {
    summary,
    spans: [...receiver.spans],
    points: [...receiver.points],
    startNs: nsOf(fault.start),
    endNs: nsOf(fault.end),
  };
}

const errorRate = (spans: ReceivedSpan[]) =>
  spans.filter((s) => s.statusCode === 2).length / Math.max(1, spans.length);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const inWindow = (run: FaultRun, s: ReceivedSpan) => s.startNs >= run.startNs && s.startNs < run.endNs;

describe('fault ground truth is visible in the emitted telemetry', () => {
  it('gpu-degradation: the target pool errs and slows down during the window only', async () => {
    const run = await runFault('gpu-degradation');
    expect(run.summary.faults[0]!.target).toEqual({ pool: POOL });
    const llm = run.spans.filter((s) => s.name === 'llm_request' && s.attributes['governor.pool'] === POOL);
    // The earliest the pool's requests can show the fault: the first of them to end after it began.
    const firstEndNs = llm
      .map((s) => s.endNs)
      .filter((ns) => ns >= run.startNs)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))[0]!;
    const firstRequestEnd = run.summary.faults[0]!.firstRequestEnd;
    expect(firstRequestEnd).not.toBeNull();
    expect(Math.abs(Number(nsOf(firstRequestEnd!) - firstEndNs))).toBeLessThan(1_000_000);
    const during = llm.filter((s) => inWindow(run, s) && s.startNs > run.startNs + 60_000_000_000n);
    const outside = llm.filter((s) => s.endNs < run.startNs);
    expect(errorRate(during)).toBeGreaterThan(0.02);
    expect(errorRate(outside)).toBeLessThan(0.005);
    const perToken = (s: ReceivedSpan) =>
      Number(s.attributes['gen_ai.latency.time_in_model_decode']) /
      Math.max(1, Number(s.attributes['gen_ai.usage.completion_tokens']) - 1);
    const ok = (s: ReceivedSpan) =>
      s.statusCode !== 2 && Number(s.attributes['gen_ai.usage.completion_tokens']) > 10;
    expect(median(during.filter(ok).map(perToken))).toBeGreaterThan(
      2 * median(outside.filter(ok).map(perToken)),
    );
    const gpuErrors = run.spans.filter((s) => s.attributes['error.type'] === 'gpu_error');
    expect(gpuErrors.length).toBeGreaterThan(0);
    expect(gpuErrors.every((s) => s.attributes['governor.pool'] === POOL)).toBe(true);
    const otherPool = run.spans.filter(
      (s) => s.name === 'llm_request' && s.attributes['governor.pool'] !== POOL && inWindow(run, s),
    );
    expect(errorRate(otherPool)).toBeLessThan(0.005);
  });

  it('preemption: requests that already streamed tokens end as preempted on the target pool, in the window', async () => {
    const run = await runFault('preemption');
    const preempted = run.spans.filter(
      (s) => s.name === ROOT && s.attributes['governor.outcome'] === 'preempted',
    );
    expect(preempted.length).toBeGreaterThan(0);
    expect(run.summary.preempted).toBe(preempted.length);
    for (const root of preempted) {
      expect(root.attributes['governor.pool']).toBe(POOL);
      expect(root.statusCode).toBe(2);
      expect(Number(root.attributes['gen_ai.usage.output_tokens'])).toBeGreaterThan(0);
      expect(root.attributes['gen_ai.response.time_to_first_chunk']).toBeDefined();
      expect(root.endNs).toBeGreaterThanOrEqual(run.startNs);
      expect(root.endNs).toBeLessThan(run.endNs);
    }
  });

  it('retry-storm: retries pile up in the window; a client retry budget keeps them down', async () => {
    const storm = await runFault('retry-storm');
    const budget = await runFault('retry-storm-budget');
    const retriesIn = (run: FaultRun) =>
      run.spans.filter(
        (s) =>
          s.name === ROOT && Number(s.attributes['http.request.resend_count'] ?? 0) > 0 && inWindow(run, s),
      ).length;
    const retriesBefore = storm.spans.filter(
      (s) =>
        s.name === ROOT &&
        Number(s.attributes['http.request.resend_count'] ?? 0) > 0 &&
        s.startNs < storm.startNs,
    ).length;
    expect(retriesIn(storm)).toBeGreaterThan(20 * Math.max(1, retriesBefore));
    expect(retriesIn(budget)).toBeLessThan(retriesIn(storm) / 3);
    const crashed = storm.spans.filter(
      (s) => s.name === ROOT && s.attributes['error.type'] === 'replica_crashed',
    );
    expect(crashed.length).toBeGreaterThan(0);
    expect(crashed.every((s) => s.attributes['governor.pool'] === POOL)).toBe(true);
  });

  it('region-outage: the region serves nothing during the window and its pools report no replicas', async () => {
    const run = await runFault('region-outage');
    const region = run.summary.faults[0]!.target.region!;
    expect(region).toBe('us-west');
    // Only a fault on one pool waits for that pool's next request; a region's loss shows at once.
    expect(run.summary.faults[0]!.firstRequestEnd).toBeNull();
    const westStarts = run.spans.filter(
      (s) => s.name === 'llm_request' && s.attributes['governor.region'] === region && inWindow(run, s),
    );
    expect(westStarts).toHaveLength(0);
    const failed = run.spans.filter(
      (s) => s.name === ROOT && s.attributes['error.type'] === 'region_unavailable',
    );
    expect(failed.length).toBeGreaterThan(0);
    const gauge = run.points.filter(
      (p) =>
        p.metric === Metric.poolReplicas &&
        p.attributes['governor.pool'] === 'llama8b-a100-west' &&
        p.timeNs > run.startNs &&
        p.timeNs < run.endNs,
    );
    expect(gauge.length).toBeGreaterThan(0);
    expect(gauge.every((p) => p.value === 0)).toBe(true);
    const afterRecovery = run.spans.filter(
      (s) => s.name === 'llm_request' && s.attributes['governor.region'] === region && s.startNs > run.endNs,
    );
    expect(afterRecovery.length).toBeGreaterThan(0);
  });

  it('cold-pool: the pool is paid for more replicas at once, and they serve only after a slow cold start, slower at first', async () => {
    const run = await runFault('cold-pool');
    const replicasGauge = run.points.filter(
      (p) => p.metric === Metric.poolReplicas && p.attributes['governor.pool'] === POOL,
    );
    expect(replicasGauge.filter((p) => p.timeNs < run.startNs).every((p) => p.value === 3)).toBe(true);
    expect(
      replicasGauge.filter((p) => p.timeNs > run.startNs && p.timeNs < run.endNs).every((p) => p.value === 5),
    ).toBe(true);
    const newReplicas = new Set([`${POOL}-3`, `${POOL}-4`]);
    const onNew = run.spans.filter(
      (s) => s.name === 'llm_request' && newReplicas.has(String(s.attributes['governor.replica'])),
    );
    expect(onNew.length).toBeGreaterThan(0);
    const coldStartNs = 2n * 180_000_000_000n;
    expect(onNew.every((s) => s.startNs >= run.startNs + coldStartNs)).toBe(true);
    const decodePerToken = (spans: ReceivedSpan[]) =>
      median(
        spans
          .filter((s) => Number(s.attributes['gen_ai.usage.completion_tokens']) > 20 && s.endNs < run.endNs)
          .map(
            (s) =>
              Number(s.attributes['gen_ai.latency.time_in_model_decode']) /
              Number(s.attributes['gen_ai.usage.completion_tokens']),
          ),
      );
    const onOld = run.spans.filter(
      (s) =>
        s.name === 'llm_request' &&
        s.attributes['governor.pool'] === POOL &&
        !newReplicas.has(String(s.attributes['governor.replica'])) &&
        s.startNs >= run.startNs + coldStartNs,
    );
    expect(decodePerToken(onNew)).toBeGreaterThan(1.3 * decodePerToken(onOld));
  });

  it('agentic-surge: a new tenant launches autonomous agents only inside the window', async () => {
    const run = await runFault('agentic-surge', 'synthetic-chat');
    const tenant = run.summary.faults[0]!.target.tenant!;
    const roots = run.spans.filter((s) => s.name === ROOT && s.attributes['governor.tenant'] === tenant);
    expect(roots.length).toBeGreaterThan(500);
    expect(roots.every((s) => s.attributes['governor.workflow.type'] === 'autonomous')).toBe(true);
    const firstSteps = roots.filter(
      (s) => s.attributes['governor.workflow.step'] === 0 && s.attributes['governor.attempt'] === 1,
    );
    expect(firstSteps.length).toBeGreaterThan(0);
    expect(firstSteps.every((s) => inWindow(run, s))).toBe(true);
    expect(roots.every((s) => s.startNs >= run.startNs)).toBe(true);
  });
});
