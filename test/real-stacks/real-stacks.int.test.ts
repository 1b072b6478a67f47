import { createRequire } from 'node:module';
import { afterAll, describe, expect, it } from 'vitest';
import { type TestGovernor, startTestGovernor } from '../../apps/server/src/otlp/start-test-governor.ts';
import { encodeMetricsRequestProtobuf, encodeTraceRequestProtobuf } from '../../packages/otlp/src/index.ts';
import {
  type RealStackFixture,
  llmdPdSampledStack,
  llmdPdStack,
  sglangStack,
  vllmV0Stack,
  vllmV1SampledStack,
  vllmV1Stack,
} from '../fixtures/real-stacks/index.ts';
import { VLLM_TTFT_BUCKETS } from '../fixtures/real-stacks/otlp-shapes.ts';

// The OTLP/gRPC client the server's own tests use (@grpc/grpc-js is the server package's
// dependency); typed here by the calls this test makes.
interface GrpcClient {
  makeUnaryRequest(
    method: string,
    serialize: (b: Buffer) => Buffer,
    deserialize: (b: Buffer) => Buffer,
    argument: Buffer,
    callback: (error: Error | null) => void,
  ): void;
  close(): void;
}
const grpc = createRequire(new URL('../../apps/server/package.json', import.meta.url))('@grpc/grpc-js') as {
  Client: new (address: string, credentials: unknown) => GrpcClient;
  credentials: { createInsecure(): unknown };
};

// Each real-stack fixture through the real OTLP endpoints (traces over gRPC as vLLM/SGLang/llm-d
// default to, metrics over HTTP protobuf as the Collector's otlphttp exporter sends them), then
// GET /api/signals?by=pool must match the generator's ground truth within 2 %.

const started: { t: TestGovernor; client: GrpcClient }[] = [];
afterAll(async () => {
  for (const s of started) {
    s.client.close();
    await s.t.close();
  }
});

function exportTraces(client: GrpcClient, body: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
      (b: Buffer) => b,
      (b: Buffer) => b,
      Buffer.from(body),
      (error) => (error ? reject(error) : resolve()),
    );
  });
}

async function ingest(f: RealStackFixture) {
  const t = await startTestGovernor(f.config);
  const client = new grpc.Client(`127.0.0.1:${t.governor.grpcPort}`, grpc.credentials.createInsecure());
  started.push({ t, client });
  for (const req of f.traces) await exportTraces(client, encodeTraceRequestProtobuf(req));
  for (const req of f.metrics) {
    const response = await fetch(`${t.url}/v1/metrics`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body: Buffer.from(encodeMetricsRequestProtobuf(req)),
    });
    expect(response.status).toBe(200);
  }
  // Let the writer flush before asking.
  await new Promise((r) => setTimeout(r, 1500));
  const at = new Date(Number(f.fleet.atNs / 1_000_000n)).toISOString();
  const response = await fetch(
    `${t.url}/api/signals?by=pool&window=${f.fleet.windowS}s&at=${encodeURIComponent(at)}`,
  );
  expect(response.status).toBe(200);
  return (await response.json()) as { groups: Record<string, unknown>[] };
}

/** The figures of one /api/signals group this test reads. */
interface PoolGroup {
  requests: number;
  ttftMs?: { p50: number | null; p95: number | null };
  e2eMs?: { p50: number | null; p95: number | null };
  errorRate: number | null;
  memoryUtil: number | null;
  computeUtil: number | null;
  utilizationRatio: number | null;
  replicas: number | null;
  costUsd: number | null;
  successPerDollar: number | null;
  sampled?: boolean;
  samplingRatio?: number | null;
}

function within2(actual: unknown, expected: number, what: string) {
  expect(typeof actual, `${what}: got ${String(actual)}`).toBe('number');
  const rel = Math.abs((actual as number) - expected) / Math.abs(expected);
  expect(
    rel,
    `${what}: Governor ${String(actual)} vs truth ${expected} (${(rel * 100).toFixed(1)} % off)`,
  ).toBeLessThanOrEqual(0.02);
}

// Under P/D each request counts once, against the decode pool (the runtime side that served it
// last); the prefill pool serves no request of its own, so only its replicas, cost and KV usage have
// a truth. Under head sampling, trace-derived figures are the sample's (rates as sampled, counts
// scaled by 1 ÷ the probability); metric-derived ones (KV, replicas, cost) are the fleet's.
for (const [name, build] of [
  ['vLLM V1 + gateway + Collector', vllmV1Stack],
  ['vLLM V0 + gateway + Collector', vllmV0Stack],
  ['vLLM V1, 10 % head sampling with th', vllmV1SampledStack],
  ['SGLang + gateway + Collector', sglangStack],
  ['llm-d P/D (EPP, routing sidecar, prefill and decode vLLM) + Collector', llmdPdStack],
  ['llm-d P/D, its default 10 % head sampling without th (sampling.service_ratios)', llmdPdSampledStack],
] as const) {
  describe(name, () => {
    const f = build();
    let groups: Record<string, unknown>[] = [];
    it('ingests and answers /api/signals by pool', async () => {
      groups = (await ingest(f)).groups;
      expect(groups.length).toBeGreaterThan(0);
    });
    for (const truth of Object.values(f.truth.pools)) {
      const servesRequests = truth.requests > 0;
      it(`pool ${truth.pool}: ${servesRequests ? 'TTFT, e2e, error rate, utilization, replicas, cost, success per dollar' : 'replicas, cost and KV usage (a prefill pool)'} within 2 %`, () => {
        const g = groups.find((x) => (x.key as Record<string, unknown>).pool === truth.pool) as
          | PoolGroup
          | undefined;
        expect(
          g,
          `no group for pool ${truth.pool}; got ${JSON.stringify(groups.map((x) => x.key))}`,
        ).toBeDefined();
        const failures: string[] = [];
        const check = (actual: unknown, expected: number, what: string) => {
          try {
            within2(actual, expected, what);
          } catch (e) {
            failures.push((e as Error).message.split('\n')[0]!);
          }
        };
        check(g!.memoryUtil, truth.memoryUtil, 'memory util');
        check(g!.replicas, truth.paidReplicas, 'replicas');
        check(g!.costUsd, truth.costUsd, 'cost USD');
        if (servesRequests) {
          const sampling = f.sampling;
          const traced = sampling ? sampling.kept.pools[truth.pool]! : truth;
          const scale = sampling ? 1 / sampling.probability : 1;
          check(g!.ttftMs?.p50, traced.ttftMs.p50, 'ttft p50 ms');
          check(g!.ttftMs?.p95, traced.ttftMs.p95, 'ttft p95 ms');
          check(g!.e2eMs?.p50, traced.e2eMs.p50, 'e2e p50 ms');
          check(g!.e2eMs?.p95, traced.e2eMs.p95, 'e2e p95 ms');
          check(g!.requests, traced.requests * scale, 'requests');
          check(g!.errorRate, traced.errorRate, 'error rate');
          check(g!.computeUtil, traced.computeUtil * scale, 'compute util');
          check(g!.utilizationRatio, truth.memoryUtil / (traced.computeUtil * scale), 'utilization ratio');
          check(g!.successPerDollar, (traced.successfulTasks * scale) / truth.costUsd, 'success per dollar');
          expect(g!.sampled ?? false, 'sampled flag').toBe(sampling !== undefined);
          if (sampling) check(g!.samplingRatio, sampling.probability, 'sampling ratio');
        } else {
          expect(g!.requests, 'a prefill pool counts no request of its own').toBe(0);
        }
        expect(failures, failures.join('\n')).toEqual([]);
      });
    }
  });
}

// Tracing off: only the Collector's scrapes reach Governor. A pool's request figures come from its
// runtime's counters (vLLM request_success_total by finish reason, generation tokens) and latency
// histograms, as the runtime measured them; what only the gateway saw (its 429s, unreachable pods)
// is not in them.
describe('vLLM V1 with tracing off: request figures from the runtime’s counters and histograms', () => {
  const f = vllmV1Stack();
  const metricsOnly: RealStackFixture = { ...f, traces: [] };
  let groups: Record<string, unknown>[] = [];
  it('ingests the scrapes and answers /api/signals by pool', async () => {
    groups = (await ingest(metricsOnly)).groups;
    expect(groups.length).toBeGreaterThan(0);
  });
  for (const truth of Object.values(f.truth.pools)) {
    it(`pool ${truth.pool}: requests, runtime failures, TTFT within its histogram bucket, cost`, () => {
      const g = groups.find((x) => (x.key as Record<string, unknown>).pool === truth.pool) as
        | (PoolGroup & { source?: string; ttftMs?: { p50: number | null } })
        | undefined;
      expect(g).toBeDefined();
      expect(g!.source).toBe('runtime_metrics');
      const served = f.fleet.requests.filter((r) => r.pool === truth.pool && r.finishReason !== null);
      expect(g!.requests).toBe(served.length);
      const failed = served.filter((r) => r.finishReason === 'error' || r.finishReason === 'abort').length;
      within2(g!.errorRate, failed / served.length, 'runtime error rate');
      within2(g!.costUsd, truth.costUsd, 'cost USD');
      within2(g!.successPerDollar, (served.length - failed) / truth.costUsd, 'success per dollar');
      // vLLM's TTFT buckets (vllm/v1/metrics/loggers.py): the p50 lies in the bucket of the true p50.
      const bounds = VLLM_TTFT_BUCKETS;
      const ttfts = served.filter((r) => r.runtimeTtftS !== null).map((r) => r.runtimeTtftS!);
      const trueP50 = [...ttfts].sort((a, b) => a - b)[Math.floor((ttfts.length - 1) / 2)]!;
      const upper = bounds.find((b) => b >= trueP50)!;
      const lower = [...bounds].reverse().find((b) => b < trueP50) ?? 0;
      expect(g!.ttftMs!.p50!).toBeGreaterThanOrEqual(lower * 1000);
      expect(g!.ttftMs!.p50!).toBeLessThanOrEqual(upper * 1000);
    });
  }
});
