import { afterEach, describe, expect, it } from 'vitest';
import { createTempStore, ingest, testConfig } from '../../test/store-harness.ts';
import { createSignals } from '../create-signals.ts';
import { BASE_NS, atMs, chatRequest, mergeExports, traceExport } from '../fixtures/trace-fixtures.ts';
import { createRequestArrivalsReader } from './read-request-arrivals.ts';

// What the control loop reads is a function of the telemetry, not of its trace and span ids: the
// same requests under other ids (two runs of one fleet draw other random ids) read the same, also
// where requests tie — two requests of a task ending at the same instant on different pools, two
// requests reaching a pool's queue at the same instant with different prompts.

let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

/** The telemetry; `salt` changes every trace and span id and nothing else. */
function telemetry(salt: string) {
  const exports = [];
  for (let i = 0; i < 24; i++) {
    const startMs = i * 5000;
    // One task, two requests ending together: on pool a (quick prefill, slow decode) and pool b.
    for (const [pool, prefillMs, decodeMs, outcome] of [
      ['a', 100, 800, 'success'],
      ['b', 300, 600, 'error'],
    ] as const) {
      const { spans } = chatRequest({
        trace: `${salt}:task-${i}:${pool}`,
        startMs,
        queueMs: 50,
        prefillMs,
        decodeMs,
        pool,
        model: 'm',
        replica: `${pool}-0`,
        workflow: { id: `task-${i}` },
        outcome,
        inputTokens: pool === 'a' ? 400 : 1200,
        outputTokens: 50,
      });
      exports.push(traceExport(`${salt}:task-${i}:${pool}`, spans));
    }
    // Two single requests reach pool c's queue at the same instant, a short and a long prompt.
    for (const tokens of [300, 3000]) {
      const { spans } = chatRequest({
        trace: `${salt}:c-${i}-${tokens}`,
        startMs,
        queueMs: 20,
        prefillMs: tokens / 4,
        decodeMs: 500,
        pool: 'c',
        model: 'm',
        replica: 'c-0',
        inputTokens: tokens,
        outputTokens: 50,
      });
      exports.push(traceExport(`${salt}:c-${i}-${tokens}`, spans));
    }
  }
  return mergeExports(exports);
}

/**
 * Numbers to 12 significant digits: a sum of doubles over rows depends on the order DuckDB reads them
 * in (its last bits), which storage order — and so the ids — can move. No decision reads that far.
 */
function rounded<T>(value: T): T {
  return JSON.parse(
    JSON.stringify(value, (_key, v) =>
      typeof v === 'number' && !Number.isInteger(v) ? Number(v.toPrecision(12)) : v,
    ),
  );
}

async function read(salt: string) {
  const temp = await createTempStore();
  close = temp.close;
  await ingest(temp.store, [telemetry(salt)]);
  const atNs = atMs(180_000);
  const signals = createSignals(temp.store, testConfig({ signals: { lateness_ms: 0 } }), {
    now: () => Number(BASE_NS / 1_000_000n) + 3_600_000,
  });
  const snapshot = await signals.snapshot({ windowMs: 300_000, by: ['pool'], atNs });
  const arrivals = await createRequestArrivalsReader(temp.store)(atNs, 300_000);
  await temp.close();
  close = null;
  return { groups: snapshot.groups, arrivals };
}

describe('control reads under other trace and span ids', () => {
  it('reads the same per-pool signals and the same arrival order', async () => {
    const first = await read('run-1');
    const second = await read('run-2');
    // Each task counts once, for one pool, with the same pool under either set of ids.
    const tasks = (groups: typeof first.groups) =>
      Object.fromEntries(groups.map((g) => [String(g.key.pool), g.tasks]));
    expect(Object.values(tasks(first.groups)).reduce((a, b) => a + b, 0)).toBe(24 + 48);
    expect(tasks(second.groups)).toEqual(tasks(first.groups));
    expect(rounded(second.groups)).toEqual(rounded(first.groups));
    // Requests reaching pool c together are replayed in one order: the shorter prompt first.
    const c = first.arrivals.get('c')!;
    expect(c).toHaveLength(48);
    expect(c[0]!.arriveMs).toBe(c[1]!.arriveMs);
    expect(c[0]!.uncachedTokens).toBeLessThan(c[1]!.uncachedTokens);
    expect(second.arrivals).toEqual(first.arrivals);
  });
});
