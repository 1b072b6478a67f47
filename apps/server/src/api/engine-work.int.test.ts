import { createEngineWorkReader } from '@governor/control';
import { afterEach, describe, expect, it } from 'vitest';
import { type TestGovernor, startTestGovernor } from './fixtures/control-test-governor.ts';

// The engine-work reader against runtime counters sent over OTLP/HTTP to a real Governor: what it
// counts as work and busy time in a window when counters restart, arrive as deltas, or are missing.

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

async function send(body: unknown): Promise<void> {
  const response = await fetch(`${g!.url}/v1/metrics`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
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
    // Delta temporality: each point is the 10 s increment itself.
    await send(
      metricsBody(
        series('delta', () => 100),
        1,
      ),
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
    // The window (AT−30 s, AT] holds 3 samples per replica; `restarted` loses the one after its restart.
    expect(work.steps).toBe(300 + 200 + 300);
    expect(work.promptTokens).toBe(10 * 800);
    expect(work.generationTokens).toBe(5 * 800);
    // 50% busy over each counted 10 s interval.
    expect(work.busyMs).toBeCloseTo(8 * 5000, 6);
  });
});
