import { MAX_SIGNAL_GROUPS } from '@governor/conventions';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempStore, ingest, testConfig } from '../../test/store-harness.ts';
import { createSignals } from '../create-signals.ts';
import { atMs, chatRequest, traceExport } from '../fixtures/trace-fixtures.ts';

// A grouping runs without the group cap until a window of it holds more groups than the cap, then
// with it (window-rows.ts): what a window shows must not depend on which windows were read before.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const CONFIG = testConfig({ signals: { lateness_ms: 10_000 }, slo: { ttft_ms: 1000 } });
const WIDE_TENANTS = MAX_SIGNAL_GROUPS + 7;

describe('the group cap', () => {
  it('gives the same figures for a narrow window before and after a window past the cap, and caps the wide one either way', async () => {
    const { store, close } = await createTempStore();
    cleanups.push(close);
    // Minute 0: three tenants, uneven traffic. Minute 10: one request from each of 1,007 tenants.
    const narrow = Array.from({ length: 12 }, (_, i) =>
      chatRequest({
        trace: `narrow-${i}`,
        startMs: 1_000 + i * 1_000,
        queueMs: 5 + i,
        prefillMs: 20 + 3 * i,
        decodeMs: 200 + 10 * i,
        pool: i % 2 === 0 ? 'a' : 'b',
        tenant: `t${i % 3}`,
        outcome: i === 7 ? 'error' : 'success',
      }),
    );
    const wide = Array.from({ length: WIDE_TENANTS }, (_, i) =>
      chatRequest({
        trace: `wide-${i}`,
        startMs: 600_000 + (i % 50) * 100,
        queueMs: 5,
        prefillMs: 20,
        decodeMs: 100 + (i % 13),
        pool: 'a',
        tenant: `tenant-${i}`,
      }),
    );
    await ingest(
      store,
      [...narrow, ...wide].map((r, i) => traceExport(`r${i}`, r.spans)),
    );
    const signals = createSignals(store, CONFIG);
    const narrowWindow = () =>
      signals.snapshot({ windowMs: 60_000, by: ['tenant', 'pool'], atNs: atMs(40_000) });
    const wideWindow = () =>
      signals.snapshot({ windowMs: 60_000, by: ['tenant', 'pool'], atNs: atMs(640_000) });

    const before = await narrowWindow();
    expect(before.truncated).toBe(false);
    expect(before.groups).toHaveLength(6);

    for (let round = 0; round < 2; round++) {
      const capped = await wideWindow();
      expect(capped.truncated).toBe(true);
      expect(capped.groups).toHaveLength(MAX_SIGNAL_GROUPS + 1);
      expect(capped.otherGroups).toBe(WIDE_TENANTS - MAX_SIGNAL_GROUPS);
      expect(capped.groups.at(-1)).toMatchObject({ key: {}, other: true });
      expect(capped.groups.reduce((n, g) => n + g.requests, 0)).toBe(WIDE_TENANTS);

      const after = await narrowWindow();
      expect(after).toEqual(before);
    }
  });
});
