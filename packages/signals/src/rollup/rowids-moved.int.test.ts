import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Store, createStore } from '@governor/store';
import { afterEach, describe, expect, it } from 'vitest';
import { syntheticSpanBatch } from '../../test/store-harness.ts';
import { getFactsRefresher } from './refresh-request-facts.ts';

// The refresh finds new spans by rowid and applies them in a later statement. A checkpoint after
// retention's deletes compacts span_store's row groups and renumbers the rowids — even under an
// open transaction — so a checkpoint between the two made the apply read other rows, record a
// position past every span, and skip the spans ingested since. A 10-minute soak with retention on
// saw the rollup stand still for five minutes (its lag rising 1 s per second) and never take in
// what arrived meanwhile.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const START_NS = 1_767_225_600_000_000_000n;
const batch = (seed: number) =>
  syntheticSpanBatch(seed, { spans: 500, startNs: START_NS, spacingNs: 1_000_000_000n });

const NEXT_ROWID = /SELECT max\(rowid\) AS max_rowid FROM span_store WHERE rowid >/;

/**
 * The store, with a checkpoint started right after the refresh's next query that finds new spans
 * by rowid (once), given up to `waitMs` to finish before the refresh goes on.
 */
function checkpointDuringPlan(
  store: Store,
  waitMs: number,
): { store: Store; checkpoint: () => Promise<void> } {
  let armed = true;
  let started: Promise<void> = Promise.resolve();
  const rollup: Store['rollup'] = {
    ...store.rollup,
    stop: () => store.rollup.stop(),
    get stopSignal() {
      return store.rollup.stopSignal;
    },
    execute: (sql, params) => store.rollup.execute(sql, params),
    async query(sql, params) {
      const rows = await store.rollup.query(sql, params);
      if (armed && NEXT_ROWID.test(sql)) {
        armed = false;
        started = store.writer.checkpoint();
        await Promise.race([started, new Promise((resolve) => setTimeout(resolve, waitMs))]);
      }
      return rows as never;
    },
  };
  return { store: Object.assign(Object.create(store) as Store, { rollup }), checkpoint: () => started };
}

describe('request rollup while a checkpoint renumbers span_store', () => {
  it('takes in every span that survived retention, whatever rows a concurrent checkpoint compacted', async () => {
    // Checkpoints only where the test asks for them (not by rows or time on their own).
    const dir = mkdtempSync(join(tmpdir(), 'governor-rowids-moved-'));
    const store = await createStore({
      dataDir: dir,
      checkpointRows: 10_000_000,
      checkpointIntervalMs: 3_600_000,
    });
    cleanups.push(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    // More than one row group (122,880 rows) of old spans and a few recent ones, rolled up.
    for (let seed = 0; seed < 260; seed++) await store.writer.write(batch(seed), []);
    for (let seed = 900; seed < 902; seed++) await store.writer.write(batch(seed), []);
    await store.writer.checkpoint();
    await getFactsRefresher(store).refresh();
    // New spans, not yet rolled up; then retention deletes the old ones.
    const newTraces = new Set<string>();
    for (let seed = 1000; seed < 1020; seed++) {
      const rows = batch(seed);
      for (const r of rows) newTraces.add(r.traceId);
      await store.writer.write(rows, []);
    }
    await store.execute('DELETE FROM span_store WHERE start_ns < $cut', {
      cut: START_NS + 900n * 1_000_000_000n,
    });
    const [{ maxRowid } = { maxRowid: 0 }] = await store.query<{ maxRowid: number }>(
      'SELECT max(rowid)::DOUBLE AS "maxRowid" FROM span_store',
    );

    const injected = checkpointDuringPlan(store, 3000);
    const refresher = getFactsRefresher(injected.store);
    await refresher.refresh();
    await injected.checkpoint();
    // The checkpoint did compact span_store (else this test shows nothing).
    const [{ after } = { after: Number.NaN }] = await store.query<{ after: number }>(
      'SELECT max(rowid)::DOUBLE AS after FROM span_store',
    );
    expect(after).toBeLessThan(maxRowid - 100_000);
    await refresher.refresh();

    const [{ missing } = { missing: -1 }] = await store.query<{ missing: number }>(
      `SELECT count(*)::INTEGER AS missing FROM (SELECT DISTINCT trace_id FROM span_store) s
       WHERE s.trace_id NOT IN (SELECT trace_id FROM request_facts)`,
    );
    expect(newTraces.size).toBeGreaterThan(1000);
    expect(missing).toBe(0);
  }, 120_000);
});
