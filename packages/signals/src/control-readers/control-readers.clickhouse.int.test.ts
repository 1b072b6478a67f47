import {
  type DecodedDataPoint,
  type DecodedMetric,
  type DecodedMetricsRequest,
  type DecodedTraceRequest,
  type FleetIdentity,
  createFleetIdentity,
  createHopClassifier,
  normalizeMetricsRequest,
  normalizeTraceRequest,
} from '@governor/otlp';
import { llmdTraceRequest, sglangTraceRequest, vllmTraceRequest } from '@governor/otlp/fixtures';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectClose } from '@governor/store/testing';
import { type ClickHouseForSignals, startClickHouseForSignals } from '../../test/clickhouse-harness.ts';
import { createTempStore, ingest, testConfig } from '../../test/store-harness.ts';
import { createSignals } from '../create-signals.ts';
import { atMs, chatRequest, traceExport } from '../fixtures/trace-fixtures.ts';
import { rollUpOnClickHouse } from '../rollup/roll-up-on-clickhouse.ts';
import { createEngineWorkReader } from './read-engine-work.ts';
import { createPrefillSpeedReader } from './read-prefill-speed.ts';
import { createReadyReplicasReader } from './read-ready-replicas.ts';
import { createRequestArrivalsReader } from './read-request-arrivals.ts';

// The control loop's readers — ready replicas, engine work, prefill speed, request arrivals — give
// on ClickHouse (a two-shard cluster, request facts rolled up there from the same spans, in two
// batches) what they give on the embedded store over the same telemetry: counts exactly, other
// numbers to 1e-9 of their size, at several instants and windows, empty ones included. The
// telemetry is what a Kubernetes fleet sends: vLLM and SGLang pods scraped by the Collector's
// prometheus receiver at their own instants (cumulative counters with a start time, a pod
// restarting, a pod starting with `up` 0, a pod scaled in leaving NaN staleness markers, a failed
// scrape), DCGM's GPU gauges naming the pod but no pool, a bridge sending delta counters, the
// Gateway API Inference Extension's pool gauge, and gateway-fronted (some under an agent's span) and
// bare vLLM traces. ClickHouse also gets a retried export of some spans and points (a partly failed
// insert the OTLP client sent again), which must change nothing.

/** The deadline header of request i by i mod 8 (undefined: not captured). */
const DEADLINE_HEADERS: (string[] | string | undefined)[] = [
  ['soon'],
  ['30000'],
  '-5',
  '12500',
  undefined,
  ['30000'],
  undefined,
  '12500',
];

const POOLS = [
  { name: 'vllm-a', model: 'llama-8b', gpu_type: 'H100' },
  { name: 'sgl-b', model: 'qwen-32b', gpu_type: 'H100' },
  { name: 'vllm-v', model: 'llama-8b' },
  { name: 'delta-pool', model: 'llama-8b' },
  { name: 'llama-70b', model: 'llama-70b', gpu_type: 'H100' },
];
const CONFIG = testConfig({ signals: { lateness_ms: 0, task_idle_ms: 60_000 }, pools: POOLS });
const IDENTITY: FleetIdentity = createFleetIdentity({
  pools: POOLS.map((p) => ({ name: p.name })),
  gpuTypes: ['H100'],
});
const classifier = createHopClassifier();

let ch: ClickHouseForSignals;
let duck: Awaited<ReturnType<typeof createTempStore>>;

/** One in a few requests reaches its pool's queue together with a twin that has another prompt. */
function traffic(): DecodedTraceRequest[] {
  const exports: DecodedTraceRequest[] = [];
  for (let i = 0; i < 60; i++) {
    const pool = i % 3 === 2 ? 'sgl-b' : 'vllm-a';
    const twins = i % 5 === 0 ? 2 : 1;
    for (let twin = 0; twin < twins; twin++) {
      const trace = `r${i}-${twin}`;
      const inputTokens = 120 + ((i * 397 + twin * 1_000) % 2_400);
      const cachedTokens = i % 4 === 0 ? Math.floor(inputTokens / 3) : 0;
      const prefillMs = 8 + (inputTokens - cachedTokens) * (0.02 + (i % 7) * 0.003);
      const { spans } = chatRequest({
        trace,
        startMs: 1_000 + i * 2_000,
        queueMs: 2 + (i % 9) * 1.25,
        prefillMs,
        decodeMs: 150 + (i % 11) * 20,
        pool,
        model: pool === 'sgl-b' ? 'qwen-32b' : 'llama-8b',
        replica: `${pool}-${i % 2}`,
        tenant: `t${i % 4}`,
        outcome: i % 13 === 5 ? 'error' : 'success',
        ...(i % 7 === 3 ? { attempt: 2 } : {}),
        inputTokens,
        outputTokens: 30 + (i % 5),
        ...(i % 5 < 3
          ? { workflow: { id: `wf${Math.floor(i / 5)}`, type: 'agent', step: (i % 5) + 1 } }
          : {}),
      });
      // What vLLM's own span adds: its prefill time (seconds) and the prompt it prefilled.
      for (const span of spans) {
        if (span.key === 'runtime')
          span.attributes = {
            ...span.attributes,
            'gen_ai.latency.time_in_model_prefill': prefillMs / 1000,
            'gen_ai.usage.input_tokens': inputTokens,
            ...(cachedTokens > 0 ? { 'gen_ai.usage.cache_read.input_tokens': cachedTokens } : {}),
          };
        if (span.key === 'gateway' && cachedTokens > 0)
          span.attributes = { ...span.attributes, 'gen_ai.usage.cache_read.input_tokens': cachedTokens };
        // Envoy's deadline on the upstream request as the gateway captured the header: a string array
        // (HTTP semconv) on some requests, a string (an Envoy custom tag) on others, none on the rest;
        // a value that is no positive number of ms ('soon', '-5') is no deadline, not an error.
        const deadline = DEADLINE_HEADERS[i % DEADLINE_HEADERS.length];
        if (span.key === 'gateway' && deadline !== undefined)
          span.attributes = {
            ...span.attributes,
            'http.request.header.x-envoy-expected-rq-timeout-ms': deadline,
          };
      }
      // An agent's call wraps some requests: its span, their root, ends (and is exported) last.
      if (i % 6 === 1) {
        const gateway = spans.find((span) => span.key === 'gateway')!;
        gateway.parent = 'agent';
        spans.push({
          key: 'agent',
          name: 'invoke_agent planner',
          service: 'agent',
          startMs: gateway.startMs - 5,
          endMs: gateway.endMs + 2,
        });
      }
      // Some engines' spans do not say how long a request queued: no queue wait to replay.
      exports.push(traceExport(trace, i % 7 === 3 ? spans.filter((span) => span.key !== 'queue') : spans));
    }
  }
  // Bare vLLM requests (no gateway): the pool from the resource, as a deployment's env would set it.
  for (let i = 0; i < 9; i++) {
    const request = vllmTraceRequest({
      traceId: `7${i.toString(16)}f92f3577b34da6a3ce929d0e0e4736`,
      startNs: atMs(5_000 + i * 11_000),
      promptTokens: 200 + i * 310,
      prefillS: 0.01 + i * 0.0137,
      queueS: i % 3 === 0 ? 0 : 0.004 * i,
      requestId: `cmpl-${i}`,
    });
    for (const rs of request.resourceSpans) rs.resource['governor.pool'] = 'vllm-v';
    exports.push(request);
  }
  exports.push(
    sglangTraceRequest({ traceId64: '5bf92f3577b34da6', startNs: atMs(30_000) }),
    llmdTraceRequest({ traceId: '6bf92f3577b34da6a3ce929d0e0e4736', startNs: atMs(40_000) }),
  );
  return exports;
}

function point(timeMs: number, partial: Partial<DecodedDataPoint>): DecodedDataPoint {
  return {
    attributes: {},
    startNs: 0n,
    timeNs: atMs(timeMs),
    value: null,
    count: null,
    sum: null,
    min: null,
    max: null,
    bucketCounts: null,
    explicitBounds: null,
    quantiles: null,
    ...partial,
  };
}

type Metric = DecodedMetric;
type ResourceMetrics = DecodedMetricsRequest['resourceMetrics'][number];

function gauge(name: string, points: DecodedDataPoint[]): Metric {
  return { name, description: '', unit: '', type: 'gauge', isMonotonic: false, temporality: 0, points };
}

function counter(name: string, temporality: 1 | 2, points: DecodedDataPoint[]): Metric {
  return { name, description: '', unit: '', type: 'sum', isMonotonic: true, temporality, points };
}

function histogram(name: string, temporality: 1 | 2, points: DecodedDataPoint[]): Metric {
  return { name, description: '', unit: '', type: 'histogram', isMonotonic: false, temporality, points };
}

/** Scrape instants of a target: every 15 s at its phase, in [fromMs, toMs). */
function scrapes(phaseMs: number, fromMs: number, toMs: number): number[] {
  const out: number[] = [];
  for (let t = phaseMs; t < toMs; t += 15_000) if (t >= fromMs) out.push(t);
  return out;
}

const STEP_BOUNDS = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048];

interface VllmPod {
  pod: string;
  phaseMs: number;
  fromMs: number;
  toMs: number;
  /** The process' start time for a scrape at `ms`: a restart gives a new one. */
  startMs(ms: number): number;
  /** Seconds the counters have counted at `ms` (since the process started). */
  upS(ms: number): number;
  /** `up` at `ms`: 0 while the server does not answer yet. */
  up(ms: number): number;
  promptPerS: number;
  /** A scrape that failed: no sample of any series then. */
  failedMs?: number;
}

const VLLM_PODS: VllmPod[] = [
  {
    pod: 'vllm-a-6f7c9d5b4-aaaaa',
    phaseMs: 3_000,
    fromMs: 0,
    toMs: 250_000,
    startMs: () => -3_600_000,
    upS: (ms) => (ms + 3_600_000) / 1000,
    up: () => 1,
    promptPerS: 410,
  },
  {
    // Restarts at 90 s: its counters begin again from a new start time, lower; one scrape fails.
    pod: 'vllm-a-6f7c9d5b4-bbbbb',
    phaseMs: 8_000,
    fromMs: 0,
    toMs: 250_000,
    startMs: (ms) => (ms < 90_000 ? -1_800_000 : 89_000),
    upS: (ms) => (ms < 90_000 ? (ms + 1_800_000) / 1000 : (ms - 89_000) / 1000),
    up: (ms) => (ms >= 90_000 && ms < 100_000 ? 0 : 1),
    promptPerS: 290,
    failedMs: 158_000,
  },
  {
    // Scaled up at 60 s: `up` reads 0 until its server answers at 100 s.
    pod: 'vllm-a-6f7c9d5b4-ccccc',
    phaseMs: 12_000,
    fromMs: 60_000,
    toMs: 250_000,
    startMs: () => 95_000,
    upS: (ms) => Math.max(0, (ms - 95_000) / 1000),
    up: (ms) => (ms < 100_000 ? 0 : 1),
    promptPerS: 350,
  },
  {
    // Scaled in at 110 s: the receiver marks its series stale (NaN) at the next scrape.
    pod: 'vllm-a-6f7c9d5b4-ddddd',
    phaseMs: 5_000,
    fromMs: 0,
    toMs: 111_000,
    startMs: () => -600_000,
    upS: (ms) => (ms + 600_000) / 1000,
    up: () => 1,
    promptPerS: 255,
  },
];

/** A cumulative counter's value: a rate with some wobble, never going down within one start. */
function counted(perS: number, s: number, i: number): number {
  return Math.floor(perS * s) + ((i * 37) % 11);
}

function vllmTarget(p: VllmPod): ResourceMetrics {
  const times = scrapes(p.phaseMs, p.fromMs, p.toMs).filter((ms) => ms !== p.failedMs);
  const stale = scrapes(p.phaseMs, p.toMs, p.toMs + 15_000);
  const cumulative = (perS: number) => [
    ...times.map((ms, i) => point(ms, { startNs: atMs(p.startMs(ms)), value: counted(perS, p.upS(ms), i) })),
    ...stale.map((ms) => point(ms, { startNs: atMs(p.startMs(ms)), value: Number.NaN })),
  ];
  return {
    resource: {
      'service.name': 'vllm',
      'service.instance.id': `${p.pod}:8000`,
      'k8s.pod.name': p.pod,
      'k8s.deployment.name': 'vllm-a',
    },
    scopeMetrics: [
      {
        scope: { name: 'otelcol/prometheusreceiver', version: '0.115.0' },
        metrics: [
          gauge('up', [
            ...times.map((ms) => point(ms, { value: p.up(ms) })),
            ...stale.map((ms) => point(ms, { value: Number.NaN })),
          ]),
          gauge(
            'vllm:num_requests_running',
            times.filter((ms) => p.up(ms) === 1).map((ms, i) => point(ms, { value: i % 6 })),
          ),
          gauge(
            'vllm:kv_cache_usage_perc',
            times.filter((ms) => p.up(ms) === 1).map((ms, i) => point(ms, { value: (i % 10) / 10 })),
          ),
          counter('vllm:prompt_tokens_total', 2, cumulative(p.promptPerS)),
          counter('vllm:generation_tokens_total', 2, cumulative(p.promptPerS / 7)),
          counter('vllm:prefix_cache_queries_total', 2, cumulative(p.promptPerS)),
          counter('vllm:prefix_cache_hits_total', 2, cumulative(p.promptPerS / 3)),
          histogram(
            'vllm:iteration_tokens_total',
            2,
            times.map((ms, i) => {
              const steps = counted(p.promptPerS / 19, p.upS(ms), i);
              const small = Math.floor(steps * 0.7);
              return point(ms, {
                startNs: atMs(p.startMs(ms)),
                count: steps,
                sum: steps * 23,
                bucketCounts: [small, steps - small, ...STEP_BOUNDS.slice(1).map(() => 0)],
                explicitBounds: STEP_BOUNDS,
              });
            }),
          ),
        ],
      },
    ],
  };
}

/** The DCGM exporter's target: a GPU gauge per GPU, naming the pod it serves (no pool). */
function dcgmTarget(): ResourceMetrics {
  const gpus = [
    { pod: 'vllm-a-6f7c9d5b4-aaaaa', uuid: 'GPU-a0', util: (i: number) => 40 + (i % 5) * 7 },
    { pod: 'vllm-a-6f7c9d5b4-aaaaa', uuid: 'GPU-a1', util: (i: number) => 70 - (i % 4) * 9 },
    { pod: 'vllm-a-6f7c9d5b4-bbbbb', uuid: 'GPU-b0', util: (i: number) => 55 + (i % 3) * 13 },
    { pod: 'vllm-a-6f7c9d5b4-ccccc', uuid: 'GPU-c0', util: (i: number) => (i < 7 ? 0 : 61 + (i % 2)) },
    { pod: 'vllm-a-6f7c9d5b4-ddddd', uuid: 'GPU-d0', util: (i: number) => 33 + (i % 6) },
    { pod: 'delta-0', uuid: 'GPU-x0', util: (i: number) => 47 + (i % 4) * 5 },
  ];
  return {
    resource: {
      'service.name': 'dcgm-exporter',
      'service.instance.id': '10.0.9.2:9400',
      'k8s.pod.name': 'dcgm-exporter-8xk2p',
    },
    scopeMetrics: [
      {
        scope: { name: 'otelcol/prometheusreceiver', version: '0.115.0' },
        metrics: [
          gauge(
            'DCGM_FI_DEV_GPU_UTIL',
            gpus.flatMap((g) =>
              scrapes(11_000, 0, 250_000).flatMap((ms, i) =>
                // A failed scrape of bbbbb's GPU; the scaled-in pod's GPU series ends with a
                // staleness marker, then its `pod` label is gone.
                (g.uuid === 'GPU-b0' && ms === 161_000) || (g.uuid === 'GPU-d0' && ms > 116_000)
                  ? []
                  : [
                      point(ms, {
                        value: g.uuid === 'GPU-d0' && ms > 111_000 ? Number.NaN : g.util(i),
                        attributes: {
                          gpu: g.uuid.slice(-1),
                          UUID: g.uuid,
                          modelName: 'NVIDIA H100 80GB HBM3',
                          pod: g.pod,
                          ...(g.pod === 'delta-0' ? { 'governor.replica': 'delta-0' } : {}),
                        },
                      }),
                    ],
              ),
            ),
          ),
        ],
      },
    ],
  };
}

/** A scrape's time: yyyyy's at 144 s came 6 ms late (scrapes jitter). */
const jittered = (pod: string, ms: number) => (pod.endsWith('yyyyy') && ms === 144_000 ? 144_006 : ms);

/** SGLang pods, whose targets report no `up`: ready while their runtime gauge is fresh. */
function sglangTargets(): ResourceMetrics[] {
  return [
    { pod: 'sgl-b-7c8d9e6f5-xxxxx', phaseMs: 4_000, toMs: 250_000 },
    { pod: 'sgl-b-7c8d9e6f5-yyyyy', phaseMs: 9_000, toMs: 150_000 },
  ].map((p) => ({
    resource: {
      'service.name': 'sglang',
      'service.instance.id': `${p.pod}:30000`,
      'k8s.pod.name': p.pod,
      'k8s.deployment.name': 'sgl-b',
    },
    scopeMetrics: [
      {
        scope: { name: 'otelcol/prometheusreceiver', version: '0.115.0' },
        metrics: [
          gauge(
            'sglang:num_running_reqs',
            scrapes(p.phaseMs, 0, p.toMs).map((ms, i) => point(jittered(p.pod, ms), { value: (i * 3) % 8 })),
          ),
          counter(
            'sglang:prompt_tokens_total',
            2,
            scrapes(p.phaseMs, 0, p.toMs).map((ms, i) =>
              point(ms, { startNs: atMs(-60_000), value: counted(300, ms / 1000 + 60, i) }),
            ),
          ),
        ],
      },
    ],
  }));
}

/** A bridge that pushes delta counters (each point the increment since the previous one). */
function deltaTarget(): ResourceMetrics {
  const times = scrapes(6_000, 0, 250_000);
  const attributes = { 'governor.pool': 'delta-pool', 'governor.replica': 'delta-0' };
  const delta = (perS: number) =>
    times.map((ms, i) =>
      point(ms, {
        startNs: atMs(i === 0 ? ms - 15_000 : times[i - 1]!),
        value: Math.floor(perS * 15) + ((i * 13) % 7),
        attributes,
      }),
    );
  return {
    resource: { 'service.name': 'trtllm-bridge' },
    scopeMetrics: [
      {
        scope: { name: 'bridge', version: '1' },
        metrics: [
          counter('vllm:prompt_tokens_total', 1, delta(520)),
          counter('vllm:generation_tokens_total', 1, delta(66)),
          histogram(
            'vllm:iteration_tokens_total',
            1,
            times.map((ms, i) =>
              point(ms, {
                startNs: atMs(i === 0 ? ms - 15_000 : times[i - 1]!),
                count: 400 + ((i * 29) % 17),
                sum: 9_000,
                bucketCounts: [400 + ((i * 29) % 17)],
                explicitBounds: [],
                attributes,
              }),
            ),
          ),
        ],
      },
    ],
  };
}

/** The endpoint picker's InferencePool gauge: one pool has no pods scraped, one has. */
function gieTarget(): ResourceMetrics {
  return {
    resource: {
      'service.name': 'gaie-epp',
      'k8s.pod.name': 'gaie-llama-70b-epp-6b9d8c7f5-w4tzk',
    },
    scopeMetrics: [
      {
        scope: { name: 'otelcol/prometheusreceiver', version: '0.115.0' },
        metrics: [
          gauge(
            'inference_pool_ready_pods',
            ['llama-70b', 'vllm-a'].flatMap((name) =>
              scrapes(7_000, 0, 250_000).map((ms, i) =>
                point(ms, { value: name === 'vllm-a' ? 9 : 2 + Math.floor(i / 5), attributes: { name } }),
              ),
            ),
          ),
        ],
      },
    ],
  };
}

function fleetMetrics(): DecodedMetricsRequest {
  return {
    resourceMetrics: [
      ...VLLM_PODS.map(vllmTarget),
      dcgmTarget(),
      ...sglangTargets(),
      deltaTarget(),
      gieTarget(),
    ],
  };
}

beforeAll(async () => {
  ch = await startClickHouseForSignals();
  duck = await createTempStore();
  const exports = traffic();
  const metrics = fleetMetrics();
  await ingest(duck.store, exports, [metrics], IDENTITY);
  await createSignals(duck.store, CONFIG).refresh({ force: true });

  const points = normalizeMetricsRequest(metrics, {}, IDENTITY).rows;
  const spans = exports.flatMap(
    (t) => normalizeTraceRequest(t, { classifier, aliases: {}, identity: IDENTITY }).rows,
  );
  await ch.writer.write([], points);
  // The spans reach ClickHouse in two batches, each rolled up as it arrives, so many traces and
  // tasks are rolled up twice: their facts get a second version, or a tombstone where a request's
  // key (its start) moved once its root — an agent's span, exported last — came. The second batch
  // also holds a retried export: spans and points that are on the shards already.
  const late = (span: (typeof spans)[number], i: number) => span.service === 'agent' || i % 3 === 2;
  const first = spans.filter((span, i) => !late(span, i));
  const second = spans.filter(late);
  await ch.writer.write(first, []);
  await rollUpOnClickHouse(ch.io, first, CONFIG, 1n);
  await ch.writer.write([...second, ...spans.slice(0, 150)], points.slice(0, 400));
  await rollUpOnClickHouse(ch.io, [...second, ...spans.slice(0, 150)], CONFIG, 2n);
}, 120_000);

afterAll(async () => {
  await duck?.close();
  await ch?.stop();
});

/** A reader's map as an object sorted by pool. */
const sorted = <T>(map: Map<string, T>): Record<string, T> =>
  Object.fromEntries([...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

describe('ready replicas on ClickHouse', () => {
  const cases: { atNs: bigint; lookbackMs?: number }[] = [
    ...[5_000, 40_000, 70_000, 95_000, 105_000, 118_000, 131_000, 160_000, 200_000, 245_000].map((ms) => ({
      atNs: atMs(ms),
    })),
    ...[95_000, 200_000].map((ms) => ({ atNs: atMs(ms), lookbackMs: 300_000 })),
    ...[50_000, 131_000].map((ms) => ({ atNs: atMs(ms), lookbackMs: 20_000 })),
    // sgl-b's yyyyy last reported at 144.006 s, 15.006 s after the one before: two such intervals
    // and 1 ns later it is stale by exact arithmetic, fresh by DuckDB's, which compares the times as
    // DOUBLEs (256 ns apart out here; ClickHouse would compare its Int64 with the DOUBLE exactly).
    { atNs: atMs(174_018) + 1n },
  ];

  it.each(cases)(
    'at $atNs, lookback $lookbackMs ms (undefined: the default): pool for pool',
    async ({ atNs, lookbackMs }) => {
      const expected = await createReadyReplicasReader(duck.store, lookbackMs)(atNs);
      const actual = await createReadyReplicasReader(ch.reader, lookbackMs)(atNs);
      expect(sorted(actual)).toEqual(sorted(expected));
    },
  );

  it('reads the fleet: pods whose own `up` is 1, SGLang pods by their gauges, the InferencePool gauge', async () => {
    const read = createReadyReplicasReader(ch.reader);
    // 105 s: aaaaa, ccccc (answering since 100 s) and ddddd; bbbbb restarting (its `up` 0 at 98 s).
    // SGLang's two pods by their gauges; llama-70b by its InferencePool's gauge, while vllm-a's own
    // InferencePool gauge (9) gives way to its pods.
    expect(sorted(await read(atMs(105_000)))).toEqual({ 'llama-70b': 3, 'sgl-b': 2, 'vllm-a': 3 });
    // 118 s: bbbbb back; ddddd, scaled in at 110 s, still counts until its staleness marker.
    expect(sorted(await read(atMs(118_000)))).toEqual({ 'llama-70b': 3, 'sgl-b': 2, 'vllm-a': 4 });
    // 131 s: ddddd's `up` is NaN (stale) at 125 s.
    expect((await read(atMs(131_000))).get('vllm-a')).toBe(3);
    // 245 s: SGLang's yyyyy stopped reporting at 144 s.
    expect(sorted(await read(atMs(245_000)))).toEqual({ 'llama-70b': 5, 'sgl-b': 1, 'vllm-a': 3 });
    // DuckDB's rounding at the freshness bound, kept: see the case above.
    expect((await read(atMs(174_018) + 1n)).get('sgl-b')).toBe(2);
  });

  it('reads nothing before any point', async () => {
    expect(await createReadyReplicasReader(ch.reader)(atMs(-1_000))).toEqual(new Map());
    expect(await createReadyReplicasReader(duck.store)(atMs(-1_000))).toEqual(new Map());
  });
});

describe('engine work on ClickHouse', () => {
  const cases = [
    { atMs: 60_000, windowMs: 30_000 },
    { atMs: 100_000, windowMs: 30_000 },
    { atMs: 130_000, windowMs: 60_000 },
    { atMs: 200_000, windowMs: 100_000 },
    { atMs: 245_000, windowMs: 15_000 },
    { atMs: 120_000, windowMs: 120_000 },
  ];

  it.each(cases)('at $atMs ms over $windowMs ms: pool for pool', async ({ atMs: at, windowMs }) => {
    const expected = await createEngineWorkReader(duck.store)(atMs(at), windowMs);
    expect(expected.get('vllm-a')?.steps).toBeGreaterThan(0);
    expect(expected.get('delta-pool')?.promptTokens).toBeGreaterThan(0);
    expect(expected.get('vllm-a')?.prefixCache?.hitTokens).toBeGreaterThan(0);
    const actual = await createEngineWorkReader(ch.reader)(atMs(at), windowMs);
    expectClose(sorted(actual), sorted(expected), 'engine work');
  });

  it('reads nothing before any point or after the last', async () => {
    for (const at of [atMs(-1_000), atMs(600_000)]) {
      expect(await createEngineWorkReader(duck.store)(at, 30_000)).toEqual(new Map());
      expect(await createEngineWorkReader(ch.reader)(at, 30_000)).toEqual(new Map());
    }
  });
});

describe('prefill speed on ClickHouse', () => {
  const cases = [
    { atMs: 130_000, windowMs: 200_000 },
    { atMs: 60_000, windowMs: 40_000 },
    { atMs: 100_000, windowMs: 12_000 },
    { atMs: 125_000, windowMs: 125_000 },
  ];

  it.each(cases)('at $atMs ms over $windowMs ms: pool for pool', async ({ atMs: at, windowMs }) => {
    const expected = await createPrefillSpeedReader(duck.store)(atMs(at), windowMs);
    expect(expected.size).toBeGreaterThan(0);
    const actual = await createPrefillSpeedReader(ch.reader)(atMs(at), windowMs);
    expectClose(sorted(actual), sorted(expected), 'prefill speed');
  });

  it('reads every traced pool, with the fastest tenth where five long prompts ran', async () => {
    const speeds = sorted(await createPrefillSpeedReader(ch.reader)(atMs(130_000), 200_000));
    expect(Object.keys(speeds)).toEqual(['sgl-b', 'vllm-a', 'vllm-v']);
    for (const s of Object.values(speeds)) {
      expect(s.msPerToken).toBeGreaterThan(0);
      expect(s.fastestMsPerToken).toBeGreaterThan(0);
    }
  });

  it('reads nothing before any span', async () => {
    expect(await createPrefillSpeedReader(ch.reader)(atMs(-1_000), 60_000)).toEqual(new Map());
    expect(await createPrefillSpeedReader(duck.store)(atMs(-1_000), 60_000)).toEqual(new Map());
  });
});

describe('request arrivals on ClickHouse', () => {
  const cases = [
    { atMs: 150_000, windowMs: 300_000, cap: undefined },
    { atMs: 150_000, windowMs: 300_000, cap: 7 },
    { atMs: 70_000, windowMs: 40_000, cap: undefined },
    // Caps that fall between two requests reaching the queue together (i = 55 and i = 30).
    { atMs: 150_000, windowMs: 300_000, cap: 3 },
    { atMs: 70_000, windowMs: 40_000, cap: 4 },
    { atMs: 125_000, windowMs: 60_000, cap: 1 },
  ];

  it.each(cases)(
    'at $atMs ms over $windowMs ms (cap $cap): the same requests in the same order',
    async ({ atMs: at, windowMs, cap }) => {
      const expected = await createRequestArrivalsReader(duck.store, cap)(atMs(at), windowMs);
      expect(expected.get('vllm-a')?.length).toBeGreaterThan(0);
      const actual = await createRequestArrivalsReader(ch.reader, cap)(atMs(at), windowMs);
      const counts = (m: typeof expected) =>
        Object.fromEntries([...m].map(([pool, list]) => [pool, list.length]));
      expect(counts(actual)).toEqual(counts(expected));
      // Tasks, attempts and prompts are counts: exactly; times to 1e-9.
      const exact = (m: typeof expected) =>
        sorted(
          new Map(
            [...m].map(([pool, list]) => [pool, list.map((r) => [r.task, r.attempt, r.uncachedTokens])]),
          ),
        );
      expect(exact(actual)).toEqual(exact(expected));
      if (at === 150_000 && cap === undefined)
        expect([...actual.values()].flat().some((r) => r.attempt === 2)).toBe(true);
      expectClose(sorted(actual), sorted(expected), 'arrivals');
    },
  );

  it('replays twins reaching a queue together in one order, the shorter prompt first', async () => {
    const all = await createRequestArrivalsReader(ch.reader)(atMs(150_000), 300_000);
    expect([...all.keys()].sort()).toEqual(['llama-8b-h100', 'sgl-b', 'vllm-a', 'vllm-v']);
    const a = all.get('vllm-a')!;
    const together = a.findIndex((r, i) => i > 0 && r.arriveMs === a[i - 1]!.arriveMs);
    expect(together).toBeGreaterThan(0);
    expect(a[together - 1]!.uncachedTokens).toBeLessThan(a[together]!.uncachedTokens);
    // The cap keeps the newest, still in arrival order.
    expect(a.some((r) => r.queueMs === undefined)).toBe(true);
    const capped = (await createRequestArrivalsReader(ch.reader, 7)(atMs(150_000), 300_000)).get('vllm-a')!;
    expect(capped.map((r) => r.ttftMs)).toEqual(a.slice(-7).map((r) => r.ttftMs));
  });

  it('reads the deadline Envoy set on each request, as the gateway captured the header', async () => {
    for (const reader of [createRequestArrivalsReader(duck.store), createRequestArrivalsReader(ch.reader)]) {
      const all = await reader(atMs(150_000), 300_000);
      const deadlines = [...all.values()].flat().map((r) => r.deadlineMs);
      expect(deadlines.filter((d) => d === 30_000).length).toBeGreaterThan(5);
      expect(deadlines.filter((d) => d === 12_500).length).toBeGreaterThan(5);
      expect(deadlines.filter((d) => d === undefined).length).toBeGreaterThan(5);
      expect(new Set(deadlines)).toEqual(new Set([30_000, 12_500, undefined]));
    }
  });

  it('reads nothing before any request', async () => {
    expect(await createRequestArrivalsReader(ch.reader)(atMs(-1_000), 60_000)).toEqual(new Map());
    expect(await createRequestArrivalsReader(duck.store)(atMs(-1_000), 60_000)).toEqual(new Map());
  });
});
