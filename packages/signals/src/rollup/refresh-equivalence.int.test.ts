import { createHopClassifier, normalizeTraceRequest } from '@governor/otlp';
import { createRandom, syntheticTraceRequest } from '@governor/otlp/fixtures';
import type { Store } from '@governor/store';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempStore } from '../../test/store-harness.ts';
import { getFactsRefresher } from './refresh-request-facts.ts';

// The incremental rollup must not depend on how spans were delivered: the same spans, arriving as
// a fleet sends them (each service's exporter on its own, out of order, some twice, a trace's spans
// spread over many refreshes), give exactly the request_facts one refresh over all of them gives.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function freshStore(): Promise<Store> {
  const { store, close } = await createTempStore();
  cleanups.push(close);
  return store;
}

/** request_facts as comparable rows: doubles rounded (sums may add up in another order). */
async function facts(store: Store): Promise<string[]> {
  const rows = await store.query<Record<string, unknown>>('SELECT * FROM request_facts ORDER BY trace_id');
  return rows.map((row) =>
    JSON.stringify(row, (_k, v) =>
      typeof v === 'number' && !Number.isInteger(v) ? Number(v.toPrecision(9)) : v,
    ),
  );
}

describe('request rollup, incremental vs at once', () => {
  it('gives the same request facts whether spans arrive shuffled over many refreshes or all at once', async () => {
    const classifier = createHopClassifier();
    const request = syntheticTraceRequest({ spans: 24_000, seed: 42, startNs: 1_767_225_600_000_000_000n });
    const rows = normalizeTraceRequest(request, { classifier, aliases: {} }).rows;
    expect(new Set(rows.map((r) => r.traceId)).size).toBeGreaterThan(5000);

    // Delivered late and out of order: each span lands in one of the next few batches after its
    // trace's first, one in ten twice (an exporter retry).
    const random = createRandom(7);
    const batches: (typeof rows)[] = Array.from({ length: 16 }, () => []);
    rows.forEach((row, i) => {
      const home = Math.floor((i / rows.length) * 11);
      batches[home + Math.floor(random() * 6)]!.push(row);
      if (random() < 0.1) batches[home + Math.floor(random() * 6)]!.push(row);
    });

    const incremental = await freshStore();
    const refresher = getFactsRefresher(incremental);
    for (const batch of batches) {
      await incremental.writer.write(batch, []);
      const t = performance.now();
      await refresher.refresh();
      console.log('inc', batch.length, (performance.now() - t).toFixed(0));
    }
    const atOnce = await freshStore();
    await atOnce.writer.write(batches.flat(), []);
    const t1 = performance.now();
    await getFactsRefresher(atOnce).refresh();
    console.log('once', (performance.now() - t1).toFixed(0));

    const expected = await facts(atOnce);
    expect(expected.length).toBe(new Set(rows.map((r) => r.traceId)).size);
    expect(await facts(incremental)).toEqual(expected);
  }, 120_000);
});
