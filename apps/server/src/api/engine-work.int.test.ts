import { createEngineWorkReader } from '@governor/control';
import { decodeMetricsRequestJson, encodeMetricsRequestProtobuf } from '@governor/otlp';
import { afterEach, describe, expect, it } from 'vitest';
import { type TestGovernor, startTestGovernor } from './fixtures/control-test-governor.ts';

// The engine-work reader against runtime counters sent over OTLP/HTTP to a real Governor: what it
// counts as work and busy time in a window when counters restart, arrive as deltas, are missing, or
// a sample lacks a point or carries one that is not a number.

let g: TestGovernor | null = null;
afterEach(async () => {
  await g?.close();
  g = null;
});

const AT_MS = Date.UTC(2024, 0, 1, 0, 10, 0);
const ns = (ms: number) => String(BigInt(ms) * 1_000_000n);
const attrs = (replica: string) => [
  { key: 'governor.pool', value: { stringValue: 'p' } },
  { key: 'governor.replica', value: { stringValue: replica } },
];

interface Sample {
  replica: string;
  atMs: number;
  startMs: number;
  /** Steps; prompt tokens are 10× and generated tokens 5× as many. */
  steps: number;
  utilPct: number;
}

/** OTLP/JSON metrics: each sample as the four series the reader reads (`counters: false`: util only). */
function metricsBody(samples: Sample[], temporality: 1 | 2, counters = true): unknown {
  const points = (value: (s: Sample) => number) =>
    samples.map((s) => ({
      startTimeUnixNano: ns(s.startMs),
      timeUnixNano: ns(s.atMs),
      asDouble: value(s),
      attributes: attrs(s.replica),
    }));
  const sum = (name: string, factor: number) => ({
    name,
    sum: {
      aggregationTemporality: temporality,
      isMonotonic: true,
      dataPoints: points((s) => s.steps * factor),
    },
  });
  const metrics: unknown[] = [
    {
      name: 'DCGM_FI_DEV_GPU_UTIL',
      gauge: {
        dataPoints: samples.map((s) => ({
          timeUnixNano: ns(s.atMs),
          asDouble: s.utilPct,
          attributes: attrs(s.replica),
        })),
      },
    },
  ];
  if (counters) {
    metrics.push(sum('vllm:prompt_tokens_total', 10), sum('vllm:generation_tokens_total', 5), {
      name: 'vllm:iteration_tokens_total',
      histogram: {
        aggregationTemporality: temporality,
        dataPoints: samples.map((s) => ({
          startTimeUnixNano: ns(s.startMs),
          timeUnixNano: ns(s.atMs),
          count: String(s.steps),
          sum: s.steps * 15,
          bucketCounts: [String(s.steps)],
          explicitBounds: [],
          attributes: attrs(s.replica),
        })),
      },
    });
  }
  return {
    resourceMetrics: [
      { resource: { attributes: [] }, scopeMetrics: [{ scope: { name: 'engine-work-test' }, metrics }] },
    ],
  };
}

/** What `drop` picks — a metric's `i`-th point — is left out of the body. */
type Pick = (name: string, i: number) => boolean;

function withPoints(body: unknown, pick: Pick, change: (points: unknown[], i: number) => void): unknown {
  const copy = structuredClone(body) as {
    resourceMetrics: { scopeMetrics: { metrics: Record<string, { dataPoints: unknown[] } | string>[] }[] }[];
  };
  for (const metric of copy.resourceMetrics[0]!.scopeMetrics[0]!.metrics) {
    const data = (metric.gauge ?? metric.sum ?? metric.histogram) as { dataPoints: unknown[] };
    for (let i = data.dataPoints.length - 1; i >= 0; i--)
      if (pick(metric.name as string, i)) change(data.dataPoints, i);
  }
  return copy;
}

async function send(body: unknown, drop: Pick = () => false): Promise<void> {
  const response = await fetch(`${g!.url}/v1/metrics`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(withPoints(body, drop, (points, i) => points.splice(i, 1))),
  });
  expect(response.status).toBe(200);
}

/** Sends `body` over OTLP/protobuf with the points `nan` picks set to NaN. */
async function sendProtobuf(body: unknown, nan: Pick): Promise<void> {
  const decoded = decodeMetricsRequestJson(JSON.stringify(body));
  for (const metric of decoded.resourceMetrics[0]!.scopeMetrics[0]!.metrics)
    metric.points.forEach((p, i) => {
      if (nan(metric.name, i)) p.value = Number.NaN;
    });
  const response = await fetch(`${g!.url}/v1/metrics`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-protobuf' },
    body: encodeMetricsRequestProtobuf(decoded),
  });
  expect(response.status).toBe(200);
}

/** Samples every 10 s from 40 s before AT_MS to AT_MS; `steps(i)` is the counter at the i-th. */
function series(replica: string, steps: (i: number) => number, startMs = (_i: number) => AT_MS - 3_600_000) {
  return [0, 1, 2, 3, 4].map((i) => ({
    replica,
    atMs: AT_MS - 40_000 + i * 10_000,
    startMs: startMs(i),
    steps: steps(i),
    utilPct: 50,
  }));
}

describe('engine work from runtime counters', () => {
  it('counts each sample’s rise, skips the interval across a restart, takes deltas as they come', async () => {
    g = await startTestGovernor();
    // Cumulative, 100 steps per 10 s.
    await send(
      metricsBody(
        series('steady', (i) => 1000 + 100 * i),
        2,
      ),
    );
    // Cumulative, the process restarts before the 4th sample: that interval counts nothing.
    await send(
      metricsBody(
        series(
          'restarted',
          (i) => (i < 3 ? 1000 + 100 * i : 10 + 100 * (i - 3)),
          (i) => (i < 3 ? AT_MS - 3_600_000 : AT_MS - 15_000),
        ),
        2,
      ),
    );
    // Delta temporality: each point is the 10 s increment since the previous report.
    await send(
      metricsBody(
        series(
          'delta',
          () => 100,
          (i) => AT_MS - 50_000 + i * 10_000,
        ),
        1,
      ),
    );
    // A failed scrape: no GPU utilization at the 4th sample. That sample has no busy time, and the 5th's
    // utilization spans two intervals while its counters rise over one: neither counts.
    await send(
      metricsBody(
        series('gappy', (i) => 1000 + 100 * i),
        2,
      ),
      (name, i) => name === 'DCGM_FI_DEV_GPU_UTIL' && i === 3,
    );
    // NaN is a valid OTLP double (sent here over protobuf): a sample carrying one is not counted,
    // whether in the GPU's utilization or in a counter.
    for (const metric of ['DCGM_FI_DEV_GPU_UTIL', 'vllm:prompt_tokens_total'])
      await sendProtobuf(
        metricsBody(
          series(`nan ${metric}`, (i) => 1000 + 100 * i),
          2,
        ),
        (name, i) => name === metric && i === 4,
      );
    // GPU utilization without runtime counters: no work to weigh it against, so not counted.
    await send(
      metricsBody(
        series('gauges-only', () => 0),
        2,
        false,
      ),
    );

    const read = createEngineWorkReader(g.gov.store);
    const work = (await read(BigInt(AT_MS) * 1_000_000n, 30_000)).get('p')!;
    // The window (AT−30 s, AT] holds 3 samples per replica; `restarted` loses the one after its
    // restart, `gappy` the two around its missing point, each `nan` replica the one carrying a NaN.
    const counted = 3 + 2 + 3 + 1 + 2 + 2;
    expect(work.steps).toBe(100 * counted);
    expect(work.promptTokens).toBe(10 * 100 * counted);
    expect(work.generationTokens).toBe(5 * 100 * counted);
    // 50% busy over each counted 10 s interval.
    expect(work.busyMs).toBeCloseTo(counted * 5000, 6);
  });
});
