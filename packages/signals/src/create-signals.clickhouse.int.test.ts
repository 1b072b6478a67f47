import {
  type DecodedMetricsRequest,
  type DecodedTraceRequest,
  createHopClassifier,
  normalizeMetricsRequest,
  normalizeTraceRequest,
} from '@governor/otlp';
import { llmdTraceRequest, sglangTraceRequest, vllmTraceRequest } from '@governor/otlp/fixtures';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectClose } from '@governor/store/testing';
import { type ClickHouseForSignals, startClickHouseForSignals } from '../test/clickhouse-harness.ts';
import { createTempStore, ingest, testConfig } from '../test/store-harness.ts';
import { type Signals, createSignals } from './create-signals.ts';
import type { SignalGroup } from '@governor/conventions';
import { atMs, chatRequest, traceExport } from './fixtures/trace-fixtures.ts';
import { type ClickHouseRollupLoop, startClickHouseRollupLoop } from './rollup/clickhouse-rollup-loop.ts';
import { createClickHouseRollup } from './rollup/roll-up-on-clickhouse.ts';

// The signals a user reads — snapshot, series, traces, a trace's waterfall, tasks, the watermark —
// are the same on ClickHouse (a two-shard cluster, request facts rolled up by a node's rollup loop)
// as on the embedded store, over the same telemetry: counts exactly, sums to 1e-9 of their size.

const CONFIG = testConfig({
  signals: { lateness_ms: 10_000, task_idle_ms: 60_000 },
  slo: { ttft_ms: 40, e2e_ms: 330 },
  pricing: { gpu_hour_usd: { H100: 3.5 } },
  pools: [
    { name: 'a', model: 'llama-8b', region: 'eu', gpu_type: 'H100', peak_tokens_per_s_per_replica: 2_000 },
    { name: 'b', model: 'qwen-32b' },
    // Not traced: its figures come from vLLM's own counters and histograms.
    { name: 'untraced', model: 'llama-70b', gpu_type: 'H100' },
  ],
});
const classifier = createHopClassifier();

let ch: ClickHouseForSignals;
let duck: Awaited<ReturnType<typeof createTempStore>>;
let loop: ClickHouseRollupLoop;
let embedded: Signals;
let clustered: Signals;
// A node's signals read while the rollup had not yet caught up, on a clock the test moves.
let early: Signals;
let earlyClockMs = Date.now();
const POOL_SNAPSHOT = { windowMs: 400_000, by: ['pool' as const], atNs: atMs(400_000) };

function traffic(): DecodedTraceRequest[] {
  const requests = Array.from({ length: 80 }, (_, i) =>
    traceExport(
      `r${i}`,
      chatRequest({
        trace: `r${i}`,
        startMs: 1_000 + i * 4_000,
        queueMs: 2 + (i % 9),
        prefillMs: 15 + (i % 7) * 3,
        decodeMs: 150 + (i % 11) * 20,
        pool: ['a', 'b', 'c'][i % 3],
        replica: `${['a', 'b', 'c'][i % 3]}-${i % 2}`,
        tenant: `t${i % 4}`,
        priority: i % 3,
        outcome: i % 13 === 5 ? 'error' : i % 17 === 3 ? 'timeout' : 'success',
        inputTokens: 100 + i,
        outputTokens: 30 + (i % 5),
        cacheHit: i % 4 === 0,
        ...(i % 5 < 3
          ? { workflow: { id: `wf${Math.floor(i / 5)}`, type: 'agent', step: (i % 5) + 1, steps: 3 } }
          : {}),
      }).spans,
    ),
  );
  // A request that ends 20 minutes after it started: windows select by end.
  const long = traceExport(
    'long',
    chatRequest({
      trace: 'long',
      startMs: 2_000,
      queueMs: 5,
      prefillMs: 20,
      decodeMs: 1_200_000,
      pool: 'a',
      replica: 'a-0',
    }).spans,
  );
  return [
    ...requests,
    long,
    vllmTraceRequest({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', startNs: atMs(20_000) }),
    sglangTraceRequest({ traceId64: '5bf92f3577b34da6', startNs: atMs(30_000) }),
    llmdTraceRequest({ traceId: '6bf92f3577b34da6a3ce929d0e0e4736', startNs: atMs(40_000) }),
  ];
}

/**
 * vLLM's counters and histograms as the Collector's prometheus receiver forwards them, for two pods
 * of the untraced pool: cumulative, one pod restarting mid-way (a new start time, lower values).
 */
function runtimeMetrics(): DecodedMetricsRequest {
  const scrapes = Array.from({ length: 12 }, (_, i) => 5_000 + i * 15_000);
  const point = (
    ms: number,
    startMs: number,
    attributes: Record<string, string>,
    value: number | null,
    histogram?: number[],
  ) => ({
    attributes,
    startNs: atMs(startMs),
    timeNs: atMs(ms),
    value: histogram ? null : value,
    count: histogram ? histogram.reduce((a, b) => a + b, 0) : null,
    sum: histogram ? 1 : null,
    min: null,
    max: null,
    bucketCounts: histogram ?? null,
    explicitBounds: histogram ? [0.01, 0.05, 0.1, 0.5] : null,
    quantiles: null,
  });
  const pods = [
    { replica: 'u-0', start: (_ms: number) => 1_000, scale: (i: number) => i + 1 },
    // Restarted at 90 s: its counters begin again from a new start time.
    {
      replica: 'u-1',
      start: (ms: number) => (ms < 90_000 ? 2_000 : 90_000),
      scale: (i: number) => (scrapes[i]! < 90_000 ? i + 3 : i - 5),
    },
  ];
  const series = (name: string, type: 'sum' | 'histogram' | 'gauge', points: ReturnType<typeof point>[]) => ({
    name,
    description: '',
    unit: '',
    type,
    isMonotonic: type === 'sum',
    temporality: 2,
    points,
  });
  const attrs = (replica: string, extra: Record<string, string> = {}) => ({
    'governor.pool': 'untraced',
    'governor.replica': replica,
    ...extra,
  });
  return {
    resourceMetrics: [
      {
        resource: { 'service.name': 'vllm' },
        scopeMetrics: [
          {
            scope: { name: 'prometheus', version: '1' },
            metrics: [
              // The pool is there by its gauges; its requests only in the counters.
              series(
                'vllm:kv_cache_usage_perc',
                'gauge',
                pods.flatMap((p) =>
                  scrapes.map((ms, i) => point(ms, p.start(ms), attrs(p.replica), (i % 5) / 10)),
                ),
              ),
              series(
                'vllm:request_success_total',
                'sum',
                pods.flatMap((p) =>
                  scrapes.flatMap((ms, i) => [
                    point(ms, p.start(ms), attrs(p.replica, { finished_reason: 'stop' }), 10 * p.scale(i)),
                    point(ms, p.start(ms), attrs(p.replica, { finished_reason: 'abort' }), p.scale(i)),
                  ]),
                ),
              ),
              series(
                'vllm:generation_tokens_total',
                'sum',
                pods.flatMap((p) =>
                  scrapes.map((ms, i) => point(ms, p.start(ms), attrs(p.replica), 900 * p.scale(i))),
                ),
              ),
              series(
                'vllm:time_to_first_token_seconds',
                'histogram',
                pods.flatMap((p) =>
                  scrapes.map((ms, i) =>
                    point(ms, p.start(ms), attrs(p.replica), null, [
                      2 * p.scale(i),
                      5 * p.scale(i),
                      3 * p.scale(i),
                      p.scale(i),
                      0,
                    ]),
                  ),
                ),
              ),
            ],
          },
        ],
      },
    ],
  };
}

beforeAll(async () => {
  ch = await startClickHouseForSignals();
  duck = await createTempStore();
  const exports = traffic();
  const metrics = runtimeMetrics();
  await ingest(duck.store, exports, [metrics]);
  embedded = createSignals(duck.store, CONFIG);
  await embedded.refresh({ force: true });

  await ch.writer.write([], normalizeMetricsRequest(metrics, {}).rows);
  loop = startClickHouseRollupLoop(createClickHouseRollup(ch.io, CONFIG), { intervalMs: 60_000 });
  clustered = createSignals({ engine: 'clickhouse', reader: ch.reader, rollup: loop }, CONFIG);
  early = createSignals({ engine: 'clickhouse', reader: ch.reader, rollup: loop }, CONFIG, {
    now: () => earlyClockMs,
  });
  expect((await early.snapshot(POOL_SNAPSHOT)).groups.find((g) => g.key.pool === 'b')).toBeUndefined();
  // Two batches, as two exports reach a node: the loop rolls up both in one run.
  const rows = exports.flatMap((t) => normalizeTraceRequest(t, { classifier, aliases: {} }).rows);
  const half = Math.floor(rows.length / 2);
  for (const batch of [rows.slice(0, half), rows.slice(half)]) {
    await ch.writer.write(batch, []);
    loop.add(batch);
  }
  expect(clustered.rollupLag()?.ms).toBeGreaterThanOrEqual(0);
  const done = await clustered.refresh();
  expect(done?.requestsWritten).toBeGreaterThan(80);
  expect(clustered.rollupLag()).toMatchObject({ ms: 0, catchUpMs: 0, failing: false });
}, 120_000);

afterAll(async () => {
  await loop?.stop();
  await duck?.close();
  await ch?.stop();
});

describe('the signals on ClickHouse', () => {
  it('have the embedded store’s watermark', async () => {
    const expected = await embedded.watermarkNs();
    expect(expected).not.toBeNull();
    expect(await clustered.watermarkNs()).toBe(expected);
  });

  it('have the embedded store’s oldest event, where the control window’s coverage begins', async () => {
    const expected = await embedded.oldestEventNs();
    expect(expected).not.toBeNull();
    expect(expected!).toBeLessThan((await embedded.newestEventNs())!);
    expect(await clustered.oldestEventNs()).toBe(expected);
  });

  it.each([[['pool']], [['tenant']], [[]]] as const)('snapshot by %j: group for group', async (by) => {
    const opts = { windowMs: 200_000, by: [...by], atNs: atMs(200_000) };
    const expected = await embedded.snapshot(opts);
    expect(expected.groups.length).toBeGreaterThan(0);
    expectClose(await clustered.snapshot(opts), expected, 'snapshot');
  });

  it.each([[['model', 'priority']], [['tenant']]] as const)(
    'a counts-only snapshot by %j has the full one’s requests, failures and retries on both engines',
    async (by) => {
      const opts = { windowMs: 200_000, by: [...by], atNs: atMs(200_000) };
      const counted = ({ key, requests, errorRate, retryRatio, tasks }: SignalGroup) => ({
        key,
        requests,
        errorRate,
        retryRatio,
        tasks,
      });
      for (const signals of [embedded, clustered]) {
        const full = (await signals.snapshot(opts)).groups;
        const counts = await signals.snapshot({ ...opts, countsOnly: true });
        expect(full.length).toBeGreaterThan(1);
        expect(counts.groups.map(counted)).toEqual(full.map(counted));
        // It reads no latency percentile.
        expect(counts.groups.every((g) => g.ttftMs.p95 === null)).toBe(true);
      }
    },
  );

  it('fills the untraced pool from its runtime counters as the embedded store does', async () => {
    const opts = { windowMs: 200_000, by: ['pool' as const], atNs: atMs(200_000) };
    const untraced = (await clustered.snapshot(opts)).groups.find((g) => g.key.pool === 'untraced');
    expect(untraced?.source).toBe('runtime_metrics');
    expect(untraced?.requests).toBeGreaterThan(0);
    expect(untraced?.ttftMs?.p50).toBeGreaterThan(0);
  });

  it('read again the learned peak a read took before the rollups caught up, within 30 s', async () => {
    // Pool b has no configured peak: its compute utilisation rests on the peak learned from its
    // history, which was empty when \`early\` first read it.
    const expected = await embedded.snapshot(POOL_SNAPSHOT);
    expect(expected.groups.find((g) => g.key.pool === 'b')?.computeUtil).toBeGreaterThan(0);
    earlyClockMs += 31_000;
    expectClose(await early.snapshot(POOL_SNAPSHOT), expected, 'snapshot');
  });

  it('count a request that started long before the window, in the window it ended in', async () => {
    const opts = { windowMs: 60_000, by: ['pool' as const], atNs: atMs(1_250_000) };
    const expected = await embedded.snapshot(opts);
    expect(expected.groups.find((g) => g.key.pool === 'a')?.requests).toBe(1);
    expectClose(await clustered.snapshot(opts), expected, 'snapshot');
    const traces = { limit: 10, fromNs: atMs(1_190_000), toNs: atMs(1_250_000) };
    expect((await embedded.traces(traces)).map((t) => t.traceId)).toHaveLength(1);
    expectClose(await clustered.traces(traces), await embedded.traces(traces), 'traces');
  });

  it('series step for step', async () => {
    const opts = {
      signal: 'ttftMs.p95',
      by: ['pool' as const],
      fromNs: atMs(0),
      toNs: atMs(200_000),
      stepMs: 40_000,
    };
    const expected = await embedded.series(opts);
    expect(expected.series.length).toBeGreaterThan(1);
    expect(expected.series.flatMap((s) => s.points).filter((p) => p.v !== null).length).toBeGreaterThan(5);
    expectClose(await clustered.series(opts), expected, 'series');
  });

  it.each([
    { limit: 200 },
    { limit: 10 },
    { limit: 200, pool: 'a', outcome: 'error' },
    { limit: 200, model: 'llama-8b', minMs: 200 },
    { limit: 200, tenant: 't2', priority: '1' },
  ])('traces matching %j', async (search) => {
    const expected = await embedded.traces(search);
    expect(expected.length).toBeGreaterThan(0);
    expectClose(await clustered.traces(search), expected, 'traces');
  });

  it.each([
    '4bf92f3577b34da6a3ce929d0e0e4736',
    '00000000000000005bf92f3577b34da6',
    '6bf92f3577b34da6a3ce929d0e0e4736',
  ])('the waterfall of trace %s', async (traceId) => {
    const expected = await embedded.trace(traceId);
    expect(expected?.spans.length).toBeGreaterThan(0);
    expectClose(await clustered.trace(traceId), expected, 'trace');
  });

  it('no waterfall for an unknown trace', async () => {
    expect(await clustered.trace('ffffffffffffffffffffffffffffffff')).toBeNull();
  });

  it.each([
    { limit: 100, toNs: atMs(200_000), windowMs: 200_000 },
    { limit: 5, toNs: atMs(200_000), windowMs: 200_000 },
    { limit: 100, toNs: atMs(200_000), windowMs: 200_000, status: 'failed' as const },
    { limit: 100, toNs: atMs(200_000), windowMs: 200_000, filter: { tenant: 't1' } },
  ])('tasks, query %#', async (query) => {
    const expected = await embedded.tasks(query);
    expect(expected.length).toBeGreaterThan(0);
    expectClose(await clustered.tasks(query), expected, 'tasks');
  });
});
