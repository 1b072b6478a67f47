import { afterEach, describe, expect, it } from 'vitest';
import { createTempStore, ingest, testConfig } from '../../test/store-harness.ts';
import { createSignals } from '../create-signals.ts';
import { BASE_NS, atMs, chatRequest, mergeExports, traceExport } from '../fixtures/trace-fixtures.ts';
import { createRequestArrivalsReader } from './read-request-arrivals.ts';

// The requests a control tick replays come from the request rollup. A tick reads them alongside the
// signal snapshots, which wait for the rollup to take in every acknowledged span: the arrivals must
// too, or a tick would replay fewer requests than its snapshots counted, depending on when the
// rollup's refresh happened to run rather than on the telemetry.

let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

const POOLS = ['a', 'b'] as const;
const PER_POOL = 10;

/** Batch `n`: PER_POOL requests on each pool, one every 500 ms, starting n × 10 s in. */
function batch(n: number) {
  const exports = [];
  for (const pool of POOLS) {
    for (let i = 0; i < PER_POOL; i++) {
      const trace = `batch-${n}:${pool}-${i}`;
      const { spans } = chatRequest({
        trace,
        startMs: n * 10_000 + i * 500,
        queueMs: 30,
        prefillMs: 120,
        decodeMs: 900,
        pool,
        model: 'm',
        replica: `${pool}-0`,
        inputTokens: 600,
        outputTokens: 40,
      });
      exports.push(traceExport(trace, spans));
    }
  }
  return mergeExports(exports);
}

type Counts = Record<string, number>;

const counts = (arrivals: Map<string, unknown[]>): Counts =>
  Object.fromEntries(POOLS.map((pool) => [pool, arrivals.get(pool)?.length ?? 0]));

describe('request arrivals read-your-writes', () => {
  it('sees every acknowledged request at once, and as many as a snapshot read alongside counts', async () => {
    const temp = await createTempStore();
    close = temp.close;
    const store = temp.store;
    const signals = createSignals(store, testConfig({ signals: { lateness_ms: 0 } }), {
      now: () => Number(BASE_NS / 1_000_000n) + 3_600_000,
    });
    const readArrivals = createRequestArrivalsReader(store);
    // The 12 batches end by 120 s: all in the window.
    const atNs = atMs(290_000);
    const windowMs = 300_000;
    let written = 0;
    const alone: { written: number; read: Counts }[] = [];
    const ticks: { written: number; snapshot: Counts; arrivals: Counts }[] = [];
    for (let n = 0; n < 12; n += 2) {
      await ingest(store, [batch(n)]);
      written += PER_POOL;
      // Read at once, before anything else has brought the rollup up to date.
      alone.push({ written, read: counts(await readArrivals(atNs, windowMs)) });
      // Another batch, then read as a control tick does: the snapshot and the arrivals at once.
      await ingest(store, [batch(n + 1)]);
      written += PER_POOL;
      const [snapshot, arrivals] = await Promise.all([
        signals.snapshot({ windowMs, by: ['pool'], atNs }),
        readArrivals(atNs, windowMs),
      ]);
      ticks.push({
        written,
        snapshot: Object.fromEntries(snapshot.groups.map((g) => [String(g.key.pool), g.requests])),
        arrivals: counts(arrivals),
      });
    }
    const all = (n: number): Counts => Object.fromEntries(POOLS.map((pool) => [pool, n]));
    expect(alone).toEqual(alone.map((r) => ({ written: r.written, read: all(r.written) })));
    expect(ticks).toEqual(
      ticks.map((t) => ({ written: t.written, snapshot: all(t.written), arrivals: all(t.written) })),
    );
  }, 120_000);
});
