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
    const request = syntheticTraceRequest({ spans: 12_000, seed: 42, startNs: 1_767_225_600_000_000_000n });
    const rows = normalizeTraceRequest(request, { classifier, aliases: {} }).rows;
    expect(new Set(rows.map((r) => r.traceId)).size).toBeGreaterThan(2000);

    // Delivered late and out of order: each span lands in one of the next few batches after its
    // trace's first, one in ten twice (an exporter retry). Batches of under 200 traces, which the
    // refresh finds through literal key lists.
    const random = createRandom(7);
    const batches: (typeof rows)[] = Array.from({ length: 106 }, () => []);
    rows.forEach((row, i) => {
      const home = Math.floor((i / rows.length) * 100);
      batches[home + Math.floor(random() * 6)]!.push(row);
      if (random() < 0.1) batches[home + Math.floor(random() * 6)]!.push(row);
    });

    const incremental = await freshStore();
    const refresher = getFactsRefresher(incremental);
    for (const batch of batches) {
      await incremental.writer.write(batch, []);
      const done = await refresher.refresh();
      expect(done.tracesTouched).toBeLessThanOrEqual(200);
    }
    const atOnce = await freshStore();
    await atOnce.writer.write(batches.flat(), []);
    await getFactsRefresher(atOnce).refresh();

    const expected = await facts(atOnce);
    expect(expected.length).toBe(new Set(rows.map((r) => r.traceId)).size);
    expect(await facts(incremental)).toEqual(expected);
  }, 120_000);

  it('gives the same request facts when every refresh is a large batch whose traces and tasks earlier refreshes saw', async () => {
    // Batches of thousands of traces take the refresh's join path (no literal key lists). Every
    // third trace's root names a workflow shared with the next two, so tasks span batches too, and a
    // trace whose root arrives late moves from its own task to its workflow's.
    const classifier = createHopClassifier();
    const request = syntheticTraceRequest({ spans: 64_000, seed: 43, startNs: 1_767_225_600_000_000_000n });
    const rows = normalizeTraceRequest(request, { classifier, aliases: {} }).rows;
    const traceIndex = new Map([...new Set(rows.map((r) => r.traceId))].map((id, i) => [id, i]));
    for (const row of rows) {
      if (row.parentSpanId !== null && row.parentSpanId !== '') continue;
      const workflow = `wf-${Math.floor(traceIndex.get(row.traceId)! / 3)}`;
      Object.assign(row, { workflowId: workflow, taskId: workflow });
    }
    const random = createRandom(11);
    const batches: (typeof rows)[] = Array.from({ length: 4 }, () => []);
    rows.forEach((row, i) => {
      const home = Math.floor((i / rows.length) * 3);
      batches[home + (random() < 0.3 ? 1 : 0)]!.push(row);
    });

    const incremental = await freshStore();
    const refresher = getFactsRefresher(incremental);
    for (const batch of batches) {
      await incremental.writer.write(batch, []);
      const done = await refresher.refresh();
      expect(done.tracesTouched).toBeGreaterThan(200);
    }
    const atOnce = await freshStore();
    await atOnce.writer.write(batches.flat(), []);
    await getFactsRefresher(atOnce).refresh();

    const expected = await facts(atOnce);
    expect(expected.length).toBe(traceIndex.size);
    expect(new Set(expected.map((row) => JSON.parse(row).task_id)).size).toBeLessThan(traceIndex.size);
    expect(await facts(incremental)).toEqual(expected);
  }, 180_000);
});
