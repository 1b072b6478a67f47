import type { GroupDimension } from '@governor/conventions';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempStore, ingest, testConfig } from '../../test/store-harness.ts';
import { createSignals } from '../create-signals.ts';
import { atMs, chatRequest, traceExport } from '../fixtures/trace-fixtures.ts';
import { pickSqlParams } from '../sql-params.ts';
import { narrowGroupKeys } from './narrow-group-keys.ts';
import { buildWindowParams, foldWindowFlags } from './window-params.ts';
import { WINDOW_SQL } from './window-rows.ts';

// The window queries group by only the keys that vary (narrow-group-keys.ts): for any grouping,
// filter, cap and number of buckets, they must return the rows the full key list returns.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const CONFIG = testConfig({ signals: { lateness_ms: 10_000 }, slo: { ttft_ms: 1000 } });

describe('narrowing the window queries to the keys that vary', () => {
  it('returns the rows of the full key list for every grouping, filter, cap and bucket count', async () => {
    const { store, close } = await createTempStore();
    cleanups.push(close);
    const requests = Array.from({ length: 48 }, (_, i) =>
      chatRequest({
        trace: `req-${i}`,
        startMs: 1_000 + i * 2_500,
        queueMs: 3 + (i % 7),
        prefillMs: 15 + 2 * (i % 5),
        decodeMs: 120 + 9 * (i % 11),
        pool: ['a', 'b', 'c'][i % 3],
        model: i % 4 === 0 ? 'llama-8b' : 'qwen-32b',
        tenant: `t${i % 5}`,
        priority: i % 2,
        outcome: i % 9 === 4 ? 'error' : 'success',
        inputTokens: 100 + i,
        outputTokens: 40 + (i % 6),
      }),
    );
    await ingest(
      store,
      requests.map((r, i) => traceExport(`e${i}`, r.spans)),
    );
    await createSignals(store, CONFIG).refresh();

    const shapes: {
      by: GroupDimension[];
      filter?: Partial<Record<GroupDimension, string>>;
      stepMs: number;
    }[] = [
      { by: [], stepMs: 150_000 },
      { by: ['pool'], stepMs: 150_000 },
      { by: ['priority'], stepMs: 150_000 },
      { by: ['tenant', 'pool'], stepMs: 150_000 },
      { by: ['model'], filter: { pool: 'a' }, stepMs: 150_000 },
      { by: [], stepMs: 30_000 },
      { by: ['pool', 'priority'], stepMs: 30_000 },
    ];
    let compared = 0;
    for (const shape of shapes) {
      const fromNs = atMs(0);
      const toNs = atMs(150_000);
      const params = buildWindowParams(
        {
          fromNs,
          toNs,
          stepNs: BigInt(shape.stepMs) * 1_000_000n,
          by: shape.by,
          filter: shape.filter ?? {},
          pendingAfterNs: toNs,
        },
        CONFIG,
      );
      const manyBuckets = shape.stepMs < 150_000;
      for (const [sql, capped] of [
        [WINDOW_SQL.aggregates, true],
        [WINDOW_SQL.percentiles, true],
        [WINDOW_SQL.aggregatesUncapped, false],
        [WINDOW_SQL.percentilesUncapped, false],
      ] as const) {
        const read = async (text: string) => {
          const final = foldWindowFlags(text, params);
          const rows = await store.query<Record<string, unknown>>(final, pickSqlParams(final, params));
          return rows
            .map((r) => JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)))
            .sort();
        };
        const full = await read(sql);
        expect(full.length).toBeGreaterThan(0);
        expect(
          await read(narrowGroupKeys(sql, params, { manyBuckets, capped })),
          JSON.stringify(shape),
        ).toEqual(full);
        compared++;
      }
    }
    expect(compared).toBe(shapes.length * 4);
  });

  it('refuses a query that does not name the key list once in its SELECT and once in its GROUP BY', () => {
    expect(() => narrowGroupKeys('SELECT 1', {}, { manyBuckets: false, capped: false })).toThrow(
      /key list|group by/i,
    );
  });
});
