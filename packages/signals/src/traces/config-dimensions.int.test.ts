import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTempStore, ingest, testConfig } from '../../test/store-harness.ts';
import { type Signals, createSignals } from '../create-signals.ts';
import { atMs, chatRequest, traceExport } from '../fixtures/trace-fixtures.ts';

// A request whose spans name only their pool (vLLM's spans carry no region or GPU type; a gateway's
// often no model either) shows the model, region and GPU type its pool's config gives it — in the
// list of requests and of tasks too, not only in a trace's waterfall or a grouping by them.

const CONFIG = testConfig({
  signals: { lateness_ms: 0 },
  pools: [{ name: 'a', model: 'llama-8b', region: 'eu-west', gpu_type: 'H100' }],
});

let store: Awaited<ReturnType<typeof createTempStore>>;
let signals: Signals;

beforeAll(async () => {
  store = await createTempStore();
  const exports = Array.from({ length: 3 }, (_, i) =>
    traceExport(
      `r${i}`,
      chatRequest({
        trace: `r${i}`,
        startMs: 1_000 + i * 5_000,
        queueMs: 2,
        prefillMs: 20,
        decodeMs: 200,
        pool: 'a',
        inputTokens: 100,
        outputTokens: 30,
      }).spans,
    ),
  );
  await ingest(store.store, exports);
  signals = createSignals(store.store, CONFIG);
});

afterAll(async () => {
  await store?.close();
});

describe('dimensions from the pool’s config', () => {
  it('fill the listed requests', async () => {
    const traces = await signals.traces({ limit: 10 });
    expect(traces).toHaveLength(3);
    for (const t of traces)
      expect(t).toMatchObject({ model: 'llama-8b', region: 'eu-west', gpuType: 'H100' });
  });

  it('fill the listed tasks', async () => {
    const tasks = await signals.tasks({ toNs: atMs(60_000), windowMs: 60_000, limit: 10 });
    expect(tasks).toHaveLength(3);
    for (const t of tasks) expect(t).toMatchObject({ model: 'llama-8b', region: 'eu-west', gpuType: 'H100' });
  });
});
