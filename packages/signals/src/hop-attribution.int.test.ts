import type { Store } from '@governor/store';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempStore, ingest, testConfig } from '../test/store-harness.ts';
import { type SpanSpec, atMs, chatRequest, traceExport } from './fixtures/trace-fixtures.ts';
import { type Signals, createSignals } from './create-signals.ts';
import type { HopKey, SignalGroupDetail } from './signal-group.ts';

// Hop attribution against requests laid out by hand: each hop's share of TTFT and of e2e latency
// is known exactly, for a vLLM span that reports its phases as attributes and for a trace whose
// phases are child spans.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function freshStore(): Promise<Store> {
  const { store, close } = await createTempStore();
  cleanups.push(close);
  return store;
}

const CONFIG = testConfig({});

async function fleetFrom(signals: Signals): Promise<SignalGroupDetail> {
  const snapshot = await signals.snapshot({ windowMs: 60_000, by: [], atNs: atMs(30_000) });
  expect(snapshot.groups).toHaveLength(1);
  return snapshot.groups[0]!;
}

function expectShares(
  group: SignalGroupDetail,
  basis: 'shareOfTtft' | 'shareOfE2e',
  expected: Partial<Record<HopKey, number>>,
) {
  const actual = Object.fromEntries(
    Object.entries(group.hops)
      .filter(([, h]) => (h[basis] ?? 0) !== 0)
      .map(([hop, h]) => [hop, h[basis]]),
  );
  expect(Object.keys(actual).sort()).toEqual(Object.keys(expected).sort());
  for (const [hop, share] of Object.entries(expected)) expect(actual[hop]).toBeCloseTo(share, 12);
}

describe('hop attribution', () => {
  it('splits a vLLM llm_request span without children into queue, prefill, decode and runtime by its latency attributes', async () => {
    const store = await freshStore();
    // Gateway root [0, 1000] ms; vLLM's llm_request [10, 990] with no child spans. vLLM measures
    // TTFT from arrival, so it includes 20 ms of its own preprocessing besides queue and prefill:
    // first token at 10 + 270 = 280 ms on the request's clock.
    const root: SpanSpec = {
      key: 'root',
      name: 'POST /v1/chat/completions',
      service: 'gateway',
      startMs: 0,
      endMs: 1000,
    };
    const vllm: SpanSpec = {
      key: 'llm',
      parent: 'root',
      name: 'llm_request',
      service: 'vllm',
      startMs: 10,
      endMs: 990,
      attributes: {
        'gen_ai.response.model': 'meta-llama/Llama-3.1-8B-Instruct',
        'gen_ai.latency.time_in_queue': 0.1,
        'gen_ai.latency.time_to_first_token': 0.27,
        'gen_ai.latency.time_in_model_prefill': 0.15,
        'gen_ai.latency.time_in_model_decode': 0.7,
        'gen_ai.latency.e2e': 0.98,
      },
    };
    await ingest(store, [traceExport('vllm-attrs', [root, vllm])]);
    for (const source of ['rollup', 'raw'] as const) {
      const fleet = await fleetFrom(createSignals(store, CONFIG, { source }));
      expect(fleet.ttftMs.p50).toBeCloseTo(280, 9);
      expect(fleet.e2eMs.p50).toBeCloseTo(1000, 9);
      // TTFT 280 ms = gateway 10 (before vLLM) + vLLM preprocessing 20 + queue 100 + prefill 150.
      expectShares(fleet, 'shareOfTtft', {
        gateway: 10 / 280,
        runtime: 20 / 280,
        queue: 100 / 280,
        prefill: 150 / 280,
      });
      // e2e 1000 ms = gateway 10 + 10, runtime 980 − (100 + 150 + 700) = 30, queue, prefill, decode.
      expectShares(fleet, 'shareOfE2e', {
        gateway: 20 / 1000,
        runtime: 30 / 1000,
        queue: 100 / 1000,
        prefill: 150 / 1000,
        decode: 700 / 1000,
      });
      expect(fleet.hops.gateway?.p50).toBeCloseTo(20, 9);
      expect(fleet.hops.runtime?.p50).toBeCloseTo(30, 9);
      expect(fleet.hops.queue?.p50).toBeCloseTo(100, 9);
      expect(fleet.hops.prefill?.p50).toBeCloseTo(150, 9);
      expect(fleet.hops.decode?.p50).toBeCloseTo(700, 9);
    }
  });

  it('takes each child span’s time before the first token out of its parent’s share of TTFT', async () => {
    const store = await freshStore();
    // gateway 2 ms → router 1 ms → llm_request with queue 50, prefill 40, decode 300 children;
    // the first token at the end of prefill (93 ms), the gateway's last 1 ms after decode.
    const { spans, truth } = chatRequest({
      trace: 'children',
      startMs: 0,
      gatewayBeforeMs: 2,
      gatewayAfterMs: 1,
      routerMs: 1,
      queueMs: 50,
      prefillMs: 40,
      decodeMs: 300,
    });
    await ingest(store, [traceExport('children', spans)]);
    for (const source of ['rollup', 'raw'] as const) {
      const fleet = await fleetFrom(createSignals(store, CONFIG, { source }));
      expect(fleet.ttftMs.p50).toBeCloseTo(truth.ttftMs, 9);
      expect(truth.ttftMs).toBe(93);
      expectShares(fleet, 'shareOfTtft', {
        gateway: 2 / 93,
        router: 1 / 93,
        queue: 50 / 93,
        prefill: 40 / 93,
      });
      expectShares(fleet, 'shareOfE2e', {
        gateway: 3 / 394,
        router: 1 / 394,
        queue: 50 / 394,
        prefill: 40 / 394,
        decode: 300 / 394,
      });
    }
  });

  it('gives a request without a first token no share of TTFT (a vLLM request that failed in prefill)', async () => {
    const store = await freshStore();
    const root: SpanSpec = {
      key: 'root',
      name: 'POST /v1/chat/completions',
      service: 'gateway',
      startMs: 0,
      endMs: 400,
    };
    const vllm: SpanSpec = {
      key: 'llm',
      parent: 'root',
      name: 'llm_request',
      service: 'vllm',
      startMs: 10,
      endMs: 390,
      error: true,
      attributes: { 'gen_ai.latency.time_in_queue': 0.3, 'gen_ai.latency.time_in_model_prefill': 0.05 },
    };
    await ingest(store, [traceExport('no-token', [root, vllm])]);
    for (const source of ['rollup', 'raw'] as const) {
      const fleet = await fleetFrom(createSignals(store, CONFIG, { source }));
      expect(fleet.ttftMs.p50).toBeNull();
      for (const hop of Object.values(fleet.hops)) expect(hop.shareOfTtft).toBeNull();
      expectShares(fleet, 'shareOfE2e', {
        gateway: 20 / 400,
        runtime: 30 / 400,
        queue: 300 / 400,
        prefill: 50 / 400,
      });
    }
  });
});
