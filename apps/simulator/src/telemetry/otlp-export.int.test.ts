import { Metric } from '@governor/conventions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOtlpReceiver } from '../../test/start-otlp-receiver.ts';
import type { OtlpReceiver, ReceivedSpan } from '../../test/start-otlp-receiver.ts';
import { runSimulation } from '../run-simulation.ts';
import type { RunSummary } from '../summary/run-summary.ts';

const ROOT = 'POST /v1/chat/completions';
const nsOf = (iso: string) => BigInt(Date.parse(iso)) * 1_000_000n;

describe('OTLP export to a plain receiver (JSON), --governor-attributes shapes', () => {
  let receiver: OtlpReceiver;
  let summary: RunSummary;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    summary = await runSimulation({
      workload: 'azure-conv',
      durationMs: 10 * 60_000,
      target: receiver.url,
      seed: 3,
      governorAttributes: true,
    });
  });
  afterAll(() => receiver.close());

  it('delivers every span and gauge point, nothing dropped', () => {
    const t = summary.telemetry!;
    expect(t.spansFailed).toBe(0);
    expect(t.spansExported).toBe(t.spansEmitted);
    expect(receiver.spans.length).toBe(t.spansEmitted);
    expect(receiver.points.length).toBe(t.metricPointsEmitted);
    expect(receiver.requests.rejected).toBe(0);
    expect(new Set(receiver.spans.map((s) => s.spanId)).size).toBe(receiver.spans.length);
  });

  it('emits one gateway root per request with the outcomes of the summary', () => {
    const roots = receiver.spans.filter((s) => s.name === ROOT);
    expect(roots.length).toBe(summary.requests);
    expect(new Set(roots.map((r) => r.traceId)).size).toBe(roots.length);
    const success = roots.filter((r) => r.attributes['governor.outcome'] === 'success').length;
    expect(success).toBe(summary.successes);
    for (const root of roots) {
      expect(root.service).toBe('gateway');
      expect(root.kind).toBe(2); // SERVER
      expect(root.parentSpanId).toBe('');
      expect(root.attributes['governor.hop']).toBe('gateway');
      expect(typeof root.attributes['governor.workflow.id']).toBe('string');
      expect(root.attributes['governor.attempt']).toBeGreaterThanOrEqual(1);
    }
  });

  it('shapes each trace like a real fleet: hop children under the root, vLLM stages under llm_request', () => {
    const byTrace = new Map<string, ReceivedSpan[]>();
    for (const s of receiver.spans) byTrace.set(s.traceId, [...(byTrace.get(s.traceId) ?? []), s]);
    let complete = 0;
    for (const spans of byTrace.values()) {
      const byId = new Map(spans.map((s) => [s.spanId, s]));
      const root = spans.find((s) => s.name === ROOT)!;
      for (const s of spans) {
        if (s === root) continue;
        expect(byId.has(s.parentSpanId)).toBe(true);
        expect(s.startNs).toBeGreaterThanOrEqual(root.startNs);
        expect(s.endNs).toBeLessThanOrEqual(root.endNs);
      }
      const llm = spans.find((s) => s.name === 'llm_request');
      if (!llm || root.attributes['governor.outcome'] !== 'success') continue;
      complete += 1;
      expect(llm.service).toBe('vllm');
      expect(llm.parentSpanId).toBe(root.spanId);
      for (const name of ['scheduler.queue', 'prefill', 'decode']) {
        expect(spans.find((s) => s.name === name)?.parentSpanId).toBe(llm.spanId);
      }
      for (const name of ['route', 'cache.lookup', 'stream']) {
        expect(spans.find((s) => s.name === name)?.parentSpanId).toBe(root.spanId);
      }
      expect(JSON.parse(String(llm.attributes['gen_ai.response.finish_reasons']))).toEqual(['stop']);
      const ttftS = Number(llm.attributes['gen_ai.latency.time_to_first_token']);
      const queueS = Number(llm.attributes['gen_ai.latency.time_in_queue']);
      const prefillS = Number(llm.attributes['gen_ai.latency.time_in_model_prefill']);
      expect(ttftS).toBeCloseTo(queueS + prefillS, 6);
      const stream = spans.find((s) => s.name === 'stream')!;
      expect(stream.events.map((e) => e.name)).toEqual(['first_token']);
      const chunkS = Number(root.attributes['gen_ai.response.time_to_first_chunk']);
      expect(Number(stream.startNs - root.startNs) / 1e9).toBeCloseTo(chunkS, 6);
    }
    expect(complete).toBeGreaterThan(1000);
  });

  it('stamps spans and gauges with simulated time, not wall time', () => {
    const start = nsOf(summary.simStart);
    const end = nsOf(summary.simEnd) + 1_000_000n;
    expect(summary.simStart.startsWith('2023-11-16T18:15:46')).toBe(true);
    for (const s of receiver.spans) {
      expect(s.startNs).toBeGreaterThanOrEqual(start);
      expect(s.endNs).toBeLessThanOrEqual(end);
    }
    const replicaPoints = receiver.points.filter((p) => p.metric === Metric.poolReplicas);
    const times = [...new Set(replicaPoints.map((p) => p.timeNs))].sort((a, b) => (a < b ? -1 : 1));
    expect(times[0]).toBe(start + 10_000_000_000n);
    expect(times[1]! - times[0]!).toBe(10_000_000_000n);
  });

  it('sends the fleet gauges Governor reads, with pool and replica attributes', () => {
    const names = new Set(receiver.points.map((p) => p.metric));
    expect([...names].sort()).toEqual(Object.values(Metric).sort());
    for (const p of receiver.points) {
      expect(typeof p.attributes['governor.pool']).toBe('string');
      if (p.metric !== Metric.poolReplicas) expect(typeof p.attributes['governor.replica']).toBe('string');
      if (p.metric === Metric.vllmKvCacheUsage) expect(p.value).toBeLessThanOrEqual(1);
      if (p.metric === Metric.dcgmGpuUtil) expect(p.value).toBeLessThanOrEqual(100);
    }
    const replicas = receiver.points.filter(
      (p) => p.metric === Metric.poolReplicas && p.attributes['governor.pool'] === 'llama70b-h100-east',
    );
    expect(replicas.every((p) => p.value === 2)).toBe(true);
  });

  it('sends the runtime counters cumulative per replica: they never go down, and the engine works', () => {
    for (const metric of [Metric.vllmPromptTokens, Metric.vllmGenerationTokens, Metric.vllmIterationTokens]) {
      const byReplica = new Map<string, number[]>();
      for (const p of receiver.points.filter((q) => q.metric === metric)) {
        const key = String(p.attributes['governor.replica']);
        byReplica.set(key, [...(byReplica.get(key) ?? []), p.value]);
      }
      expect(byReplica.size).toBeGreaterThan(0);
      for (const values of byReplica.values()) {
        for (let i = 1; i < values.length; i++) expect(values[i]).toBeGreaterThanOrEqual(values[i - 1]!);
      }
      const total = [...byReplica.values()].reduce((sum, v) => sum + v[v.length - 1]!, 0);
      expect(total).toBeGreaterThan(0);
    }
  });
});

describe('OTLP export over http/protobuf', () => {
  it('sends protobuf bodies the receiver acknowledges, nothing dropped', async () => {
    const receiver = await startOtlpReceiver();
    try {
      const summary = await runSimulation({
        workload: 'burstgpt-1',
        durationMs: 5 * 60_000,
        target: receiver.url,
        protocol: 'http/protobuf',
      });
      expect(summary.telemetry!.spansExported).toBe(summary.telemetry!.spansEmitted);
      expect(summary.telemetry!.spansEmitted).toBeGreaterThan(1000);
      expect(summary.telemetry!.lastExportError).toBeNull();
      expect(summary.telemetry!.metricPointsExported).toBe(summary.telemetry!.metricPointsEmitted);
      expect(receiver.requests.protobufBytes).toBeGreaterThan(0);
      expect(receiver.requests.rejected).toBe(0);
    } finally {
      await receiver.close();
    }
  });
});
