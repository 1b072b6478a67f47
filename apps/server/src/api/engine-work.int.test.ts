import { createEngineWorkReader, createReadyReplicasReader } from '@governor/control';
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

/** OTLP/JSON metrics: each sample as the series the reader reads (`counters: false`: util only). */
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
    metrics.push(
      sum('vllm:prompt_tokens_total', 10),
      sum('vllm:generation_tokens_total', 5),
      // Every prompt token looked up in the prefix cache, 4 in 10 found there.
      sum('vllm:prefix_cache_queries_total', 10),
      sum('vllm:prefix_cache_hits_total', 4),
      {
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
      },
    );
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
    // A failed scrape: no GPU utilization at the 4th sample. The GPU's busy share comes from the samples
    // it has (the 5th's spans two intervals), and the replica's work over its counters' three intervals
    // is weighed against that share over the same three: nothing is lost, nothing counted twice.
    await send(
      metricsBody(
        series('gappy', (i) => 1000 + 100 * i),
        2,
      ),
      (name, i) => name === 'DCGM_FI_DEV_GPU_UTIL' && i === 3,
    );
    // NaN is a valid OTLP double (sent here over protobuf; a Prometheus staleness marker): it is no
    // sample. Without the GPU's 5th the share comes from the others; without the prompt counter's 5th
    // the replica's work covers the two intervals that counter shows.
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

    const read = createEngineWorkReader(g.gov.engine.embedded!);
    const work = (await read(BigInt(AT_MS) * 1_000_000n, 30_000)).get('p')!;
    // The window (AT−30 s, AT] holds 3 intervals per replica; `restarted` loses the one across its
    // restart and `nan vllm:prompt_tokens_total` the one whose prompt count is NaN.
    const counted = 3 + 2 + 3 + 3 + 3 + 2;
    expect(work.steps).toBe(100 * counted);
    expect(work.promptTokens).toBe(10 * 100 * counted);
    expect(work.generationTokens).toBe(5 * 100 * counted);
    // 50% busy over each counted 10 s interval.
    expect(work.busyMs).toBeCloseTo(counted * 5000, 6);
    // The prefix cache's lookups over the same intervals as the work.
    expect(work.prefixCache!.queriedTokens).toBeCloseTo(10 * 100 * counted, 6);
    expect(work.prefixCache!.hitTokens).toBeCloseTo(4 * 100 * counted, 6);
  });
});

describe('engine work as a Kubernetes fleet sends it', () => {
  it('joins DCGM points (scraped at other instants, naming the pod, no pool) to the pod’s runtime counters', async () => {
    g = await startTestGovernor({ pools: [{ name: 'vllm-llama8b', gpu_type: 'H100' }] });
    const pod = 'vllm-llama8b-7d9f6c5b4-x2x9q';
    const point = (atMs: number, value: number, start = true) => ({
      ...(start ? { startTimeUnixNano: ns(AT_MS - 3_600_000) } : {}),
      timeUnixNano: ns(atMs),
      asDouble: value,
      attributes: [{ key: 'model_name', value: { stringValue: 'llama' } }],
    });
    // The vLLM target, scraped every 15 s at :03; the DCGM exporter every 15 s at :11.
    const vllmTimes = [0, 1, 2, 3, 4, 5].map((i) => AT_MS - 87_000 + i * 15_000);
    const dcgmTimes = [0, 1, 2, 3, 4, 5].map((i) => AT_MS - 79_000 + i * 15_000);
    const resource = (attrs: Record<string, string>) => ({
      attributes: Object.entries(attrs).map(([key, v]) => ({ key, value: { stringValue: v } })),
    });
    const sum = (name: string, perS: number) => ({
      name,
      sum: {
        aggregationTemporality: 2,
        isMonotonic: true,
        dataPoints: vllmTimes.map((t) => point(t, 1000 + ((t - vllmTimes[0]!) / 1000) * perS)),
      },
    });
    const body = {
      resourceMetrics: [
        {
          resource: resource({
            'service.name': 'vllm',
            'service.instance.id': '10.0.3.7:8000',
            'k8s.pod.name': pod,
            'k8s.replicaset.name': 'vllm-llama8b-7d9f6c5b4',
          }),
          scopeMetrics: [
            {
              scope: { name: 'otelcol/prometheusreceiver' },
              metrics: [
                { name: 'up', gauge: { dataPoints: vllmTimes.map((t) => point(t, 1, false)) } },
                sum('vllm:prompt_tokens_total', 400),
                sum('vllm:generation_tokens_total', 50),
                {
                  name: 'vllm:iteration_tokens_total',
                  histogram: {
                    aggregationTemporality: 2,
                    dataPoints: vllmTimes.map((t) => ({
                      startTimeUnixNano: ns(AT_MS - 3_600_000),
                      timeUnixNano: ns(t),
                      count: String(((t - vllmTimes[0]!) / 1000) * 20),
                      sum: 0,
                      bucketCounts: [],
                      explicitBounds: [],
                    })),
                  },
                },
              ],
            },
          ],
        },
        {
          resource: resource({
            'service.name': 'dcgm-exporter',
            'service.instance.id': '10.0.9.2:9400',
            'k8s.pod.name': 'dcgm-exporter-8xk2p',
          }),
          scopeMetrics: [
            {
              scope: { name: 'otelcol/prometheusreceiver' },
              metrics: [
                {
                  name: 'DCGM_FI_DEV_GPU_UTIL',
                  gauge: {
                    dataPoints: dcgmTimes.map((t) => ({
                      timeUnixNano: ns(t),
                      asDouble: 60,
                      attributes: [
                        { key: 'gpu', value: { stringValue: '0' } },
                        { key: 'modelName', value: { stringValue: 'NVIDIA H100 80GB HBM3' } },
                        { key: 'pod', value: { stringValue: pod } },
                      ],
                    })),
                  },
                },
              ],
            },
          ],
        },
      ],
    };
    await send(body);
    const work = (
      await createEngineWorkReader(g.gov.engine.embedded!)(BigInt(AT_MS) * 1_000_000n, 60_000)
    ).get('vllm-llama8b');
    expect(work).toBeDefined();
    // 400 prompt tokens, 50 generated and 20 steps per second, 60 % busy: over the 60 s window.
    const seconds = work!.promptTokens / 400;
    expect(seconds).toBeGreaterThan(44);
    expect(seconds).toBeLessThanOrEqual(60);
    expect(work!.generationTokens / seconds).toBeCloseTo(50, 6);
    expect(work!.steps / seconds).toBeCloseTo(20, 6);
    expect(work!.busyMs / (seconds * 1000)).toBeCloseTo(0.6, 6);
  });
});

describe('ready replicas as real scrapes deliver them', () => {
  it('counts every pod whose own last `up` is 1, whatever instant its target was scraped at', async () => {
    g = await startTestGovernor({ pools: [{ name: 'vllm-llama8b', gpu_type: 'H100' }] });
    // Four pods scraped every 15 s at their own offsets: three serve, one is starting (up 0), and a
    // fifth was scaled in two minutes ago.
    const target = (pod: string, offsetMs: number, up: number, lastMs = AT_MS) => ({
      resource: {
        attributes: [
          { key: 'service.name', value: { stringValue: 'vllm' } },
          { key: 'k8s.pod.name', value: { stringValue: pod } },
          { key: 'k8s.deployment.name', value: { stringValue: 'vllm-llama8b' } },
        ],
      },
      scopeMetrics: [
        {
          scope: { name: 'otelcol/prometheusreceiver' },
          metrics: [
            {
              name: 'up',
              gauge: {
                dataPoints: [0, 1, 2, 3]
                  .map((i) => lastMs - 45_000 - offsetMs + i * 15_000)
                  .map((t) => ({ timeUnixNano: ns(t), asDouble: up })),
              },
            },
          ],
        },
      ],
    });
    await send({
      resourceMetrics: [
        target('vllm-llama8b-7d9f6c5b4-aaaaa', 1_000, 1),
        target('vllm-llama8b-7d9f6c5b4-bbbbb', 6_000, 1),
        target('vllm-llama8b-7d9f6c5b4-ccccc', 12_000, 1),
        target('vllm-llama8b-7d9f6c5b4-ddddd', 9_000, 0),
        target('vllm-llama8b-7d9f6c5b4-eeeee', 3_000, 1, AT_MS - 120_000),
      ],
    });
    const ready = await createReadyReplicasReader(
      g.gov.engine.embedded!,
      300_000,
    )(BigInt(AT_MS) * 1_000_000n);
    expect(ready.get('vllm-llama8b')).toBe(3);
  });
});

describe('ready replicas from the Gateway API Inference Extension', () => {
  it('reads inference_pool_ready_pods{name} for a pool whose pods are not scraped', async () => {
    g = await startTestGovernor({ pools: [{ name: 'llama-70b', gpu_type: 'H100' }] });
    // The endpoint picker's own scrape target: its pool gauges name the InferencePool.
    await send({
      resourceMetrics: [
        {
          resource: {
            attributes: [
              { key: 'service.name', value: { stringValue: 'gaie-epp' } },
              { key: 'k8s.pod.name', value: { stringValue: 'gaie-llama-70b-epp-6b9d8c7f5-w4tzk' } },
            ],
          },
          scopeMetrics: [
            {
              scope: { name: 'otelcol/prometheusreceiver' },
              metrics: [
                {
                  name: 'inference_pool_ready_pods',
                  gauge: {
                    dataPoints: [AT_MS - 30_000, AT_MS - 15_000, AT_MS].map((t, i) => ({
                      timeUnixNano: ns(t),
                      asDouble: [3, 3, 4][i],
                      attributes: [{ key: 'name', value: { stringValue: 'llama-70b' } }],
                    })),
                  },
                },
              ],
            },
          ],
        },
      ],
    });
    const ready = await createReadyReplicasReader(g.gov.engine.embedded!)(BigInt(AT_MS) * 1_000_000n);
    expect(ready.get('llama-70b')).toBe(4);
  });
});
