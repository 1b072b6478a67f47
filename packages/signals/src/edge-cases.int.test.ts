import type { DecodedTraceRequest } from '@governor/otlp';
import type { Store } from '@governor/store';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempStore, ingest, testConfig } from '../test/store-harness.ts';
import {
  type SpanSpec,
  atMs,
  chatRequest,
  gaugeExport,
  quantileCont,
  traceExport,
  traceIdOf,
} from './fixtures/trace-fixtures.ts';
import { createSignals } from './create-signals.ts';

// Data as real fleets deliver it: late, split, duplicated, skewed, incomplete.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function freshStore(): Promise<Store> {
  const { store, close } = await createTempStore();
  cleanups.push(close);
  return store;
}

const CONFIG = testConfig({ signals: { lateness_ms: 10_000 }, slo: { ttft_ms: 1000 } });
const fleetAt = async (store: Store, atMsValue: number, windowMs = 300_000) =>
  (await createSignals(store, CONFIG).snapshot({ windowMs, by: [], atNs: atMs(atMsValue) })).groups[0]!;

describe('signals on real-world deliveries', () => {
  it('joins a trace whose spans arrive split across batches and out of order, late root included', async () => {
    const store = await freshStore();
    const signals = createSignals(store, CONFIG);
    const { spans, truth } = chatRequest({
      trace: 'split',
      startMs: 1000,
      queueMs: 40,
      prefillMs: 60,
      decodeMs: 500,
      pool: 'p',
      tenant: 't',
    });
    const bySpan = (keys: string[]) =>
      traceExport(
        'split',
        spans.filter((s) => keys.includes(s.key)),
      );
    // Children first (the runtime exports before the gateway), the root last.
    await ingest(store, [bySpan(['decode', 'prefill'])]);
    await ingest(store, [bySpan(['queue', 'runtime'])]);
    const early = await signals.snapshot({ windowMs: 60_000, by: [], atNs: atMs(30_000) });
    // Without its root the request is provisional: counted once, measured from its earliest span.
    expect(early.groups[0]!.requests).toBe(1);
    await ingest(store, [bySpan(['router']), bySpan(['gateway'])]);
    const fleet = (await signals.snapshot({ windowMs: 60_000, by: ['pool'], atNs: atMs(30_000) })).groups[0]!;
    expect(fleet.key).toEqual({ pool: 'p' });
    expect(fleet.requests).toBe(1);
    expect(fleet.ttftMs.p50).toBeCloseTo(truth.ttftMs, 6);
    expect(fleet.e2eMs.p50).toBeCloseTo(truth.e2eMs, 6);
    expect(fleet.hops.gateway?.p50).toBeCloseTo(truth.hops.gateway, 6);
    expect(fleet.hops.queue?.p50).toBeCloseTo(truth.hops.queue, 6);
    const [row] = await store.query<{ n: number }>('SELECT count(*) AS n FROM requests');
    expect(row?.n).toBe(1);
  });

  it('counts a span delivered twice (an exporter retry) once', async () => {
    const store = await freshStore();
    const { spans } = chatRequest({ trace: 'dup', startMs: 0, queueMs: 10, prefillMs: 10, decodeMs: 100 });
    await ingest(store, [traceExport('dup', spans)]);
    await ingest(store, [traceExport('dup', spans)]);
    const fleet = await fleetAt(store, 60_000);
    expect(fleet.requests).toBe(1);
    expect(fleet.hops.decode?.p50).toBeCloseTo(100, 6);
    const [row] = await store.query<{ span_count: number }>('SELECT span_count FROM requests');
    expect(row?.span_count).toBe(6);
  });

  it('reflects a late span in the next read, whenever it arrives', async () => {
    const store = await freshStore();
    const signals = createSignals(store, CONFIG);
    await ingest(store, [
      traceExport('late', [
        { key: 'gw', name: 'POST /v1/chat/completions', service: 'gateway', startMs: 0, endMs: 800 },
      ]),
    ]);
    expect(
      (await signals.snapshot({ windowMs: 60_000, by: [], atNs: atMs(10_000) })).groups[0]!.ttftMs.p50,
    ).toBeNull();
    // The runtime's span, with the first token, arrives after newer traffic moved the watermark on.
    await ingest(store, [
      traceExport('newer', [
        {
          key: 'gw',
          name: 'POST /v1/chat/completions',
          service: 'gateway',
          startMs: 120_000,
          endMs: 120_500,
        },
      ]),
    ]);
    await ingest(store, [
      traceExport('late', [
        {
          key: 'rt',
          parent: 'gw',
          name: 'llm_request',
          service: 'vllm',
          startMs: 5,
          endMs: 790,
          firstTokenMs: 205,
        },
      ]),
    ]);
    const fleet = (await signals.snapshot({ windowMs: 60_000, by: [], atNs: atMs(10_000) })).groups[0]!;
    expect(fleet.requests).toBe(1);
    expect(fleet.ttftMs.p50).toBeCloseTo(205, 6);
  });

  it('counts a retried step once: the task succeeds when the final attempt did', async () => {
    const store = await freshStore();
    const exports: DecodedTraceRequest[] = [];
    const step = (step: number, attempt: number, startMs: number, outcome: 'success' | 'error') => {
      const r = chatRequest({
        trace: `wf-${step}-${attempt}`,
        startMs,
        queueMs: 10,
        prefillMs: 20,
        decodeMs: 100,
        workflow: { id: 'wf', type: 'agent', step, steps: 2 },
        attempt,
        outcome,
      });
      exports.push(traceExport(`wf-${step}-${attempt}`, r.spans));
    };
    step(1, 1, 0, 'success');
    step(2, 1, 1000, 'error');
    step(2, 2, 2000, 'success');
    await ingest(store, exports);
    const fleet = await fleetAt(store, 60_000);
    expect(fleet.requests).toBe(3);
    expect(fleet.retries).toBe(1);
    expect(fleet.retryRatio).toBeCloseTo(1 / 3, 12);
    expect(fleet.errorRate).toBeCloseTo(1 / 3, 12);
    expect(fleet.tasks).toBe(1);
    expect(fleet.successfulTasks).toBe(1);
    expect(fleet.taskE2eMs.p50).toBeCloseTo(2000 + 133 + 1, 6);
    const [task] = await store.query<Record<string, unknown>>(
      'SELECT outcome, requests, retries, steps FROM tasks',
    );
    expect(task).toEqual({ outcome: 'success', requests: 3, retries: 1, steps: 2 });
  });

  it('treats a partial workflow as pending within the lateness and as abandoned (failed) after it', async () => {
    const store = await freshStore();
    const signals = createSignals(store, CONFIG);
    const stepOf = (id: string, step: number, startMs: number) =>
      traceExport(
        `${id}-${step}`,
        chatRequest({
          trace: `${id}-${step}`,
          startMs,
          queueMs: 1,
          prefillMs: 1,
          decodeMs: 10,
          workflow: { id, step, steps: 3 },
        }).spans,
      );
    // Workflow "old" stopped after 2 of 3 steps long ago; "fresh" has 2 of 3 steps done just now.
    await ingest(store, [
      stepOf('old', 1, 0),
      stepOf('old', 2, 1000),
      stepOf('fresh', 1, 115_000),
      stepOf('fresh', 2, 118_000),
    ]);
    const newest = await signals.newestEventNs();
    const nearHead = await signals.snapshot({ windowMs: 600_000, by: [], atNs: newest! });
    const fleet = nearHead.groups[0]!;
    expect(fleet.tasks).toBe(1);
    expect(fleet.successfulTasks).toBe(0);
    expect(fleet.abandonedTasks).toBe(1);
    expect(fleet.pendingTasks).toBe(1);
    // The third step arrives: the fresh workflow completes and succeeds.
    await ingest(store, [stepOf('fresh', 3, 121_000)]);
    const later = (await signals.snapshot({ windowMs: 600_000, by: [], atNs: atMs(200_000) })).groups[0]!;
    expect([later.tasks, later.successfulTasks, later.pendingTasks, later.abandonedTasks]).toEqual([
      2, 1, 0, 1,
    ]);
  });

  it('knows where its telemetry begins: nothing before the first span, its start after', async () => {
    const store = await freshStore();
    const signals = createSignals(store, CONFIG);
    expect(await signals.oldestEventNs()).toBeNull();
    await ingest(store, [
      traceExport(
        'later',
        chatRequest({ trace: 'later', startMs: 5000, queueMs: 1, prefillMs: 1, decodeMs: 10 }).spans,
      ),
      traceExport(
        'first',
        chatRequest({ trace: 'first', startMs: 2000, queueMs: 1, prefillMs: 1, decodeMs: 10 }).spans,
      ),
    ]);
    // The gateway's span starts the request; nothing the store holds starts earlier.
    expect(await signals.oldestEventNs()).toBe(atMs(2000));
  });

  it('never produces negative hop times under clock skew and keeps the request', async () => {
    const store = await freshStore();
    // The runtime's clock runs 30 ms behind: its span starts before its parent.
    const { spans, truth } = chatRequest({
      trace: 'skew',
      startMs: 0,
      gatewayBeforeMs: 2,
      routerMs: 1,
      queueMs: 50,
      prefillMs: 40,
      decodeMs: 300,
      runtimeSkewMs: 30,
    });
    await ingest(store, [traceExport('skew', spans)]);
    const fleet = await fleetAt(store, 60_000);
    expect(fleet.requests).toBe(1);
    expect(fleet.ttftMs.p50).toBeCloseTo(truth.ttftMs, 6);
    expect(fleet.e2eMs.p50).toBeCloseTo(truth.e2eMs, 6);
    for (const hop of Object.values(fleet.hops)) {
      expect(hop.p50).toBeGreaterThanOrEqual(0);
      expect(hop.shareOfE2e).toBeGreaterThanOrEqual(0);
    }
    // The skewed runtime now overlaps the router; overlapping siblings each keep their own time, and
    // shares are taken of the attributed total, so they still add up to 1.
    expect(Object.values(fleet.hops).reduce((s, h) => s + (h.shareOfE2e ?? 0), 0)).toBeCloseTo(1, 9);
    expect(fleet.hops.gateway?.p50).toBeCloseTo(394 - 363, 6);
    // Queue ran [-27, 23] ms on the gateway clock; only the part inside the request counts.
    expect(fleet.hops.queue?.p50).toBeCloseTo(23, 6);
  });

  it('keeps spans with missing attributes, grouped under null keys, and reads vLLM latency attributes', async () => {
    const store = await freshStore();
    const vllm: SpanSpec = {
      key: 'req',
      name: 'llm_request',
      service: 'vllm',
      startMs: 0,
      endMs: 1000,
      attributes: {
        'gen_ai.request.model': 'meta-llama/Llama-3.1-8B-Instruct',
        'gen_ai.latency.time_to_first_token': 0.25,
        'gen_ai.latency.time_in_queue': 0.1,
        'gen_ai.latency.time_in_model_prefill': 0.15,
        'gen_ai.latency.time_in_model_decode': 0.7,
        'gen_ai.usage.prompt_tokens': 900,
        'gen_ai.usage.completion_tokens': 120,
      },
    };
    const bare: SpanSpec = {
      key: 'root',
      name: 'something',
      service: 'unknown-service',
      startMs: 100,
      endMs: 300,
    };
    await ingest(store, [traceExport('vllm', [vllm]), traceExport('bare', [bare])]);
    const signals = createSignals(store, CONFIG);
    const byTenant = await signals.snapshot({ windowMs: 60_000, by: ['tenant'], atNs: atMs(30_000) });
    expect(byTenant.groups).toHaveLength(1);
    expect(byTenant.groups[0]!.key).toEqual({ tenant: null });
    expect(byTenant.groups[0]!.requests).toBe(2);
    const byModel = await signals.snapshot({ windowMs: 60_000, by: ['model'], atNs: atMs(30_000) });
    const llama = byModel.groups.find((g) => g.key.model === 'meta-llama/Llama-3.1-8B-Instruct')!;
    expect(llama.serverTtftMs.p50).toBeCloseTo(250, 6);
    expect(llama.ttftMs.p50).toBeCloseTo(250, 6);
    expect(llama.hops.queue?.p50).toBeCloseTo(100, 6);
    expect(llama.hops.prefill?.p50).toBeCloseTo(150, 6);
    expect(llama.hops.decode?.p50).toBeCloseTo(700, 6);
    expect(llama.hops.runtime?.p50).toBeCloseTo(50, 6);
    expect(llama.hops.decode?.shareOfTtft).toBe(0);
    const other = byModel.groups.find((g) => g.key.model === null)!;
    expect(other.requests).toBe(1);
    expect(other.hops.other?.p50).toBeCloseTo(200, 6);
    expect(other.ttftMs.p50).toBeNull();
  });

  it('uses explicit governor.cost.usd for a pool without replica-based cost', async () => {
    const store = await freshStore();
    const exports = [0, 1, 2].map((i) =>
      traceExport(
        `c${i}`,
        chatRequest({
          trace: `c${i}`,
          startMs: i * 1000,
          queueMs: 1,
          prefillMs: 1,
          decodeMs: 10,
          pool: 'hosted-api',
          costUsd: 0.0125,
        }).spans,
      ),
    );
    await ingest(store, exports);
    const signals = createSignals(store, CONFIG);
    const pool = (await signals.snapshot({ windowMs: 60_000, by: ['pool'], atNs: atMs(30_000) })).groups[0]!;
    expect(pool.costUsd).toBeCloseTo(0.0375, 12);
    expect(pool.successPerDollar).toBeCloseTo(3 / 0.0375, 9);
    expect(pool.replicas).toBeNull();
  });

  it('counts an idle pool’s replicas in the fleet cost', async () => {
    const store = await freshStore();
    const points = Array.from({ length: 11 }, (_, i) => ({ atMs: i * 30_000, value: 4 }));
    await ingest(
      store,
      [
        traceExport(
          'busy',
          chatRequest({
            trace: 'busy',
            startMs: 100_000,
            queueMs: 1,
            prefillMs: 1,
            decodeMs: 10,
            pool: 'busy',
            replica: 'b0',
          }).spans,
        ),
      ],
      [gaugeExport([{ name: 'governor.pool.replicas', pool: 'idle', points }])],
    );
    const config = testConfig({
      pricing: { gpu_hour_usd: { H100: 3.6 } },
      pools: [
        { name: 'idle', gpu_type: 'H100' },
        { name: 'busy', gpu_type: 'H100' },
      ],
    });
    const signals = createSignals(store, config);
    const at = atMs(300_000);
    const byPool = await signals.snapshot({ windowMs: 300_000, by: ['pool'], atNs: at });
    const idle = byPool.groups.find((g) => g.key.pool === 'idle')!;
    // 4 replicas × 300 s × 1 GPU × $3.6/h
    expect(idle.costUsd).toBeCloseTo(1.2, 9);
    expect(idle.requests).toBe(0);
    expect(idle.successPerDollar).toBe(0);
    expect(idle.costPerSuccessfulTaskUsd).toBeNull();
    const busy = byPool.groups.find((g) => g.key.pool === 'busy')!;
    expect(busy.costUsd).toBeCloseTo(0.3, 9);
    const byTenant = await signals.snapshot({ windowMs: 300_000, by: ['tenant'], atNs: at });
    expect(byTenant.groups[0]!.costUsd).toBeCloseTo(1.5, 9);
  });

  it('reports a pool’s replicas over the part of the window its gauge covers, and costs only that part', async () => {
    const store = await freshStore();
    // A 15-minute window (0, 900] s. `late` first reports at 840 s, every 30 s (a series' first point
    // also covers one reporting interval before it): it ran [810, 900] s with 4 replicas.
    // `gone` reported until −180 s and went stale 5 minutes later: it ran [0, 120] s with 5.
    const every30s = (fromMs: number, toMs: number, value: number) =>
      Array.from({ length: (toMs - fromMs) / 30_000 + 1 }, (_, i) => ({ atMs: fromMs + i * 30_000, value }));
    await ingest(
      store,
      [],
      [
        gaugeExport([
          { name: 'governor.pool.replicas', pool: 'late', points: every30s(840_000, 900_000, 4) },
          { name: 'governor.pool.replicas', pool: 'gone', points: every30s(-600_000, -180_000, 5) },
        ]),
      ],
    );
    const config = testConfig({
      // No lateness: the watermark is the last point (900 s), so the series' last step is complete.
      signals: { lateness_ms: 0 },
      pricing: { gpu_hour_usd: { H100: 3.6 } },
      pools: [
        { name: 'late', gpu_type: 'H100', gpus_per_replica: 2 },
        { name: 'gone', gpu_type: 'H100' },
      ],
    });
    const signals = createSignals(store, config);
    const byPool = await signals.snapshot({ windowMs: 900_000, by: ['pool'], atNs: atMs(900_000) });
    const late = byPool.groups.find((g) => g.key.pool === 'late')!;
    const gone = byPool.groups.find((g) => g.key.pool === 'gone')!;
    expect(late.replicas).toBeCloseTo(4, 12);
    expect(gone.replicas).toBeCloseTo(5, 12);
    // Cost is the replica-time actually covered: 4 × 90 s × 2 GPUs and 5 × 120 s × 1 GPU at $3.6/h.
    expect(late.costUsd).toBeCloseTo((4 * 90 * 2 * 3.6) / 3600, 12);
    expect(gone.costUsd).toBeCloseTo((5 * 120 * 1 * 3.6) / 3600, 12);
    const fleet = (await signals.snapshot({ windowMs: 900_000, by: [], atNs: atMs(900_000) })).groups[0]!;
    expect(fleet.replicas).toBeCloseTo(9, 12);
    expect(fleet.costUsd).toBeCloseTo((4 * 90 * 2 * 3.6 + 5 * 120 * 3.6) / 3600, 12);
    // A series step the gauge covers in full reads the same as the snapshot.
    const series = await signals.series({
      signal: 'replicas',
      by: ['pool'],
      fromNs: atMs(0),
      toNs: atMs(900_000),
      stepMs: 300_000,
    });
    const points = (pool: string) => series.series.find((s) => s.key.pool === pool)!.points.map((p) => p.v);
    expect(points('late')).toEqual([null, null, 4]);
    expect(points('gone')).toEqual([5, null, null]);
  });

  it('takes a pool’s replicas from its gauge in the steps it covers and from the replicas its requests named in the others', async () => {
    const store = await freshStore();
    // `a` is fully described by the config and reports 3 replicas every 30 s over [0, 240] s; the
    // gauge holds 5 minutes after its last point, so it covers the steps (0, 300] and (300, 600]
    // but not (600, 900], where its requests name two replicas.
    const points = Array.from({ length: 9 }, (_, i) => ({ atMs: i * 30_000, value: 3 }));
    await ingest(
      store,
      [0, 1, 2, 3].map((i) =>
        traceExport(
          `a${i}`,
          chatRequest({
            trace: `a${i}`,
            // The last one ends after 900 s: the watermark passes the last step, so it is complete.
            startMs: [650_000, 700_000, 750_000, 899_990][i]!,
            queueMs: 1,
            prefillMs: 5,
            decodeMs: 50,
            pool: 'a',
            replica: `a-${i % 2}`,
          }).spans,
        ),
      ),
      [gaugeExport([{ name: 'governor.pool.replicas', pool: 'a', points }])],
    );
    const config = testConfig({
      signals: { lateness_ms: 0 },
      pricing: { gpu_hour_usd: { H100: 3.6 } },
      pools: [{ name: 'a', gpu_type: 'H100', model: 'llama-8b', region: 'eu' }],
    });
    const series = await createSignals(store, config).series({
      signal: 'replicas',
      by: ['pool'],
      fromNs: atMs(0),
      toNs: atMs(900_000),
      stepMs: 300_000,
    });
    expect(series.series.find((s) => s.key.pool === 'a')!.points.map((p) => p.v)).toEqual([3, 3, 2]);
  });

  it('catches up by event time when rowids moved under it (retention compaction)', async () => {
    const store = await freshStore();
    const signals = createSignals(store, CONFIG);
    await ingest(store, [
      traceExport('a', chatRequest({ trace: 'a', startMs: 0, queueMs: 1, prefillMs: 1, decodeMs: 10 }).spans),
    ]);
    await signals.refresh();
    // Simulate compaction: the span recorded at the last refreshed rowid is no longer there.
    await store.execute("UPDATE rollup.main.request_facts_state SET fp_span_id = 'moved'");
    await ingest(store, [
      traceExport(
        'b',
        chatRequest({ trace: 'b', startMs: 5000, queueMs: 1, prefillMs: 1, decodeMs: 10 }).spans,
      ),
    ]);
    const result = await signals.refresh();
    expect(result?.caughtUp).toBe(true);
    const ids = await store.query<{ trace_id: string }>('SELECT trace_id FROM requests ORDER BY start_ns');
    expect(ids.map((r) => r.trace_id)).toEqual([traceIdOf('a'), traceIdOf('b')]);
  });

  it('follows the last refreshed span to where compaction moved it, without recomputing the past', async () => {
    const store = await freshStore();
    const signals = createSignals(store, CONFIG);
    for (const [i, trace] of ['a', 'b', 'c'].entries()) {
      await ingest(store, [
        traceExport(
          trace,
          chatRequest({ trace, startMs: i * 1000, queueMs: 1, prefillMs: 1, decodeMs: 10 }).spans,
        ),
      ]);
    }
    await signals.refresh();
    // Retention deleted the oldest spans and a checkpoint compacted span_store: every later rowid
    // moved down. Recorded as if the last refreshed span had sat 12 rows further on.
    await store.execute("DELETE FROM span_store WHERE trace_id = '" + traceIdOf('a') + "'");
    await store.execute('UPDATE rollup.main.request_facts_state SET last_rowid = last_rowid + 12');
    await ingest(store, [
      traceExport(
        'd',
        chatRequest({ trace: 'd', startMs: 5000, queueMs: 1, prefillMs: 1, decodeMs: 10 }).spans,
      ),
    ]);
    const result = await signals.refresh();
    expect(result?.caughtUp).toBe(false);
    expect(result?.tracesTouched).toBe(1);
    const ids = await store.query<{ trace_id: string }>('SELECT trace_id FROM requests ORDER BY start_ns');
    expect(ids.map((r) => r.trace_id)).toEqual(['a', 'b', 'c', 'd'].map(traceIdOf));
  });

  it('handles a bulk batch (thousands of traces at once) like small ones, and late spans after it', async () => {
    const store = await freshStore();
    const signals = createSignals(store, CONFIG);
    const exports = Array.from({ length: 6000 }, (_, i) =>
      traceExport(`bulk-${i}`, [
        {
          key: 'gw',
          name: 'POST /v1/chat/completions',
          service: 'gateway',
          startMs: i * 10,
          endMs: i * 10 + 500,
        },
      ]),
    );
    await ingest(store, exports);
    expect((await signals.refresh())?.tracesTouched).toBe(6000);
    await ingest(store, [
      traceExport('bulk-7', [
        {
          key: 'rt',
          parent: 'gw',
          name: 'llm_request',
          service: 'vllm',
          startMs: 75,
          endMs: 560,
          firstTokenMs: 170,
        },
      ]),
    ]);
    expect((await signals.refresh())?.tracesTouched).toBe(1);
    const [row] = await store.query<Record<string, number>>(
      `SELECT count(*) AS n, count(DISTINCT trace_id) AS traces, max(ttft_ms) FILTER (WHERE trace_id = '${traceIdOf('bulk-7')}') AS ttft FROM requests`,
    );
    expect(row).toEqual({ n: 6000, traces: 6000, ttft: 100 });
  });

  it('computes utilization: KV usage from vLLM’s gauge, compute against the peak learned from history', async () => {
    const store = await freshStore();
    // 10 minutes on 2 replicas; minute m generates (m + 1) × 600 output tokens.
    const exports: DecodedTraceRequest[] = [];
    for (let m = 0; m < 10; m++) {
      for (let i = 0; i < 6; i++) {
        const trace = `u-${m}-${i}`;
        const startMs = m * 60_000 + i * 9000 + 1000;
        exports.push(
          traceExport(
            trace,
            chatRequest({
              trace,
              startMs,
              queueMs: 1,
              prefillMs: 1,
              decodeMs: 100,
              pool: 'p',
              replica: `r${i % 2}`,
              outputTokens: (m + 1) * 100,
            }).spans,
          ),
        );
      }
    }
    const kv = Array.from({ length: 21 }, (_, i) => ({
      atMs: i * 30_000,
      value: 0.6,
      attributes: { 'governor.replica': `r${i % 2}` },
    }));
    await ingest(store, exports, [
      gaugeExport([{ name: 'vllm:kv_cache_usage_perc', pool: 'p', points: kv }]),
    ]);
    const signals = createSignals(store, CONFIG);
    const g = (await signals.snapshot({ windowMs: 60_000, by: ['pool'], atNs: atMs(600_000) })).groups[0]!;
    // Per replica per minute: (m + 1) × 600 / 60 / 2 tokens/s; the learned peak is the p99 over minutes.
    const perMinute = Array.from({ length: 10 }, (_, m) => ((m + 1) * 600) / 60 / 2);
    const peak = quantileCont(perMinute, 0.99)!;
    expect(g.peakTokensPerSPerReplica).toBeCloseTo(peak, 9);
    expect(g.tokensPerS).toBeCloseTo(6000 / 60, 9);
    expect(g.computeUtil).toBeCloseTo(6000 / 60 / 2 / peak, 9);
    expect(g.memoryUtil).toBeCloseTo(0.6, 9);
    expect(g.utilizationRatio).toBeCloseTo(0.6 / g.computeUtil!, 9);
    // The last minute ran at the learned peak: compute-bound (ratio 0.6 / ~1.01 < 0.8).
    expect(g.utilizationBound).toBe('compute');
    expect(g.replicas).toBe(2);
  });
});
