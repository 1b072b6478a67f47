import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createHopClassifier, normalizeTraceRequest, type SpanRow } from '@governor/otlp';
import { syntheticTraceRequest } from '@governor/otlp/fixtures';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Store, createStore } from '../create-store.ts';
import { listExportFiles } from './export-files.ts';
import { cutoffFor } from './run-retention.ts';

const HOUR_NS = 3_600_000_000_000n;
/** 2025-01-01T00:00:00Z */
const T0 = 1_735_689_600_000_000_000n;
const classifier = createHopClassifier();

function spansAt(startNs: bigint, count: number, seed: number): SpanRow[] {
  const request = syntheticTraceRequest({
    spans: count,
    seed,
    startNs,
    idPrefix: seed.toString(16).padStart(8, '0'),
  });
  return normalizeTraceRequest(request, { classifier, aliases: {} }).rows;
}

let dir: string;
let store: Store;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'governor-retention-'));
  store = await createStore({ dataDir: dir });
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const count = async (sql: string) => Number((await store.query<{ n: number }>(sql))[0]?.n);
const describeColumns = async (relation: string) =>
  (await store.query<{ column_name: string; column_type: string }>(`DESCRIBE ${relation}`)).map(
    (c) => `${c.column_name} ${c.column_type}`,
  );

describe('cutoffFor', () => {
  it('rounds down to a whole minute, never keeping a row past its TTL by more than that', () => {
    const MINUTE = 60_000_000_000n;
    expect(cutoffFor(T0 + 2n * HOUR_NS + 1234n, 1)).toBe(T0 + HOUR_NS);
    expect(cutoffFor(T0 + 2n * HOUR_NS + 17n * MINUTE + 5n, 1)).toBe(T0 + HOUR_NS + 17n * MINUTE);
    expect(cutoffFor(T0 + 2n * HOUR_NS, 24)).toBe(T0 - 22n * HOUR_NS);
    expect(cutoffFor(T0 + 10n * MINUTE + 5n, 0.05)).toBe(T0 + 7n * MINUTE);
  });
});

/** 1,000 spans over ten minutes at T0, all past a 1-hour TTL, and 20 four hours later (kept). */
async function writeTenOldMinutesAndALateBatch(seed: number): Promise<void> {
  for (let i = 0; i < 10; i++)
    await store.writer.write(spansAt(T0 + BigInt(i) * 60_000_000_000n, 100, seed + i), []);
  await store.writer.write(spansAt(T0 + 4n * HOUR_NS, 20, seed + 100), []);
}

/** Every one of those 1,020 spans is still in `spans`; the exported ones left the live table. */
async function expectNothingLost(rowsExported: number): Promise<void> {
  expect(await count('SELECT count(*) AS n FROM spans')).toBe(1020);
  expect(await count('SELECT count(*) AS n FROM span_store')).toBe(1020 - rowsExported);
}

describe('runRetention', () => {
  it('exports old spans to hive-partitioned Parquet, deletes them, and keeps them queryable through `spans`', async () => {
    const liveColumns = await describeColumns('span_store');
    await store.writer.write(spansAt(T0 + 60_000_000_000n, 200, 1), []); // 00:01
    await store.writer.write(spansAt(T0 + HOUR_NS + 600_000_000_000n, 120, 2), []); // 01:10
    await store.writer.write(spansAt(T0 + 2n * HOUR_NS + 1_800_000_000_000n, 80, 3), []); // 02:30
    expect(await count('SELECT count(*) AS n FROM spans')).toBe(400);

    // Newest span at 02:30 and a few seconds: a TTL of 1.5 h puts the cutoff at 01:00 (whole minutes).
    const first = await store.runRetention({ ttlHours: { spans: 1.5 } });
    const spans = first.targets.find((t) => t.target === 'spans')!;
    expect(spans).toMatchObject({
      status: 'ok',
      rowsExported: 200,
      rowsDeleted: 200,
      cutoffNs: String(T0 + HOUR_NS),
    });
    expect(spans.files).toHaveLength(1);
    expect(spans.files[0]).toMatch(/^spans\/date=2025-01-01\/hour=00\/r[\w-]+\.parquet$/);
    expect(existsSync(join(dir, 'export', spans.files[0]!))).toBe(true);
    expect(listExportFiles(join(dir, 'export'), 'spans')).toHaveLength(1);

    expect(await count('SELECT count(*) AS n FROM span_store')).toBe(200);
    expect(await count('SELECT count(*) AS n FROM spans')).toBe(400);
    expect(await describeColumns('spans')).toEqual(liveColumns);
    // Through the user gate too: enable_external_access is off, the export folder is allowed.
    const viaGate = await store.runUserQuery(`SELECT count(*) FROM spans WHERE start_ns < ${T0 + HOUR_NS}`, {
      limit: 10,
      timeoutMs: 5000,
    });
    expect(viaGate.rows).toEqual([[200]]);

    const second = await store.runRetention({ ttlHours: { spans: 0.5 } });
    expect(second.targets.find((t) => t.target === 'spans')).toMatchObject({ rowsExported: 120 });
    expect(listExportFiles(join(dir, 'export'), 'spans').map((f) => f.hour)).toEqual(['00', '01']);
    expect(await count('SELECT count(*) AS n FROM spans')).toBe(400);
    expect(await count('SELECT count(DISTINCT span_id) AS n FROM spans')).toBe(400);

    const runs = await store.query<{ state: string }>(
      "SELECT state FROM retention_runs WHERE target = 'spans'",
    );
    expect(runs.map((r) => r.state)).toEqual(['published', 'published']);
  });

  it('counts the TTL back from the server clock, not from an event dated in the future', async () => {
    const nowNs = BigInt(Date.now()) * 1_000_000n;
    await store.writer.write(spansAt(nowNs - 2n * HOUR_NS, 40, 14), []);
    await store.writer.write(spansAt(BigInt(Date.parse('2100-01-01T00:00:00Z')) * 1_000_000n, 4, 15), []);
    const report = await store.runRetention({ ttlHours: { spans: 24 } });
    expect(report.targets[0]).toMatchObject({ target: 'spans', status: 'ok', rowsDeleted: 0 });
    expect(BigInt(report.targets[0]!.cutoffNs!)).toBeLessThanOrEqual(nowNs - 23n * HOUR_NS);
    expect(await count('SELECT count(*) AS n FROM span_store')).toBe(44);
  });

  it('leaves tables without a TTL alone and reports nothing to do when nothing is old enough', async () => {
    await store.writer.write(spansAt(T0, 40, 4), []);
    const report = await store.runRetention({ ttlHours: { spans: 24 } });
    expect(report.targets.map((t) => [t.target, t.status, t.rowsExported])).toEqual([
      ['spans', 'ok', 0],
      ['metric_points', 'skipped', 0],
      ['request_facts', 'skipped', 0],
    ]);
    expect(await count('SELECT count(*) AS n FROM span_store')).toBe(40);
  });

  it('changes nothing when the export fails', async () => {
    await store.writer.write(spansAt(T0, 40, 5), []);
    await store.writer.write(spansAt(T0 + 3n * HOUR_NS, 40, 6), []);
    writeFileSync(join(dir, 'export', '.staging'), 'a file where the staging folder goes');
    const report = await store.runRetention({ ttlHours: { spans: 1 } });
    const spans = report.targets.find((t) => t.target === 'spans')!;
    expect(spans.status).toBe('failed');
    expect(spans.error).toBeTruthy();
    expect(await count('SELECT count(*) AS n FROM span_store')).toBe(80);
    expect(listExportFiles(join(dir, 'export'), 'spans')).toEqual([]);
    const failed = await store.query<{ state: string }>('SELECT state FROM retention_runs');
    expect(failed.map((r) => r.state)).toEqual(['failed']);
  });

  it('exports a large backlog in slices of bounded size, one transaction each', async () => {
    await writeTenOldMinutesAndALateBatch(200);
    const report = await store.runRetention({
      ttlHours: { spans: 1 },
      maxRowsPerSlice: 250,
      pauseBetweenSlicesMs: 0,
    });
    const spans = report.targets.find((t) => t.target === 'spans')!;
    expect(spans).toMatchObject({ status: 'ok', rowsExported: 1000, rowsDeleted: 1000 });
    expect(spans.files.length).toBeGreaterThanOrEqual(3);
    const slices = await store.query<{ n: number; rows: number }>(
      "SELECT count(*) AS n, sum(rows_exported) AS rows, max(rows_exported) AS biggest FROM retention_runs WHERE state = 'published'",
    );
    expect(slices[0]).toMatchObject({ rows: 1000 });
    expect(slices[0]!.n).toBeGreaterThanOrEqual(3);
    expect(await count('SELECT count(*) AS n FROM spans')).toBe(1020);
    expect(await count('SELECT count(DISTINCT span_id) AS n FROM spans')).toBe(1020);
    expect(await count('SELECT count(*) AS n FROM span_store')).toBe(20);
  });

  it('waits for beforeSlice before every slice and rests between slices as long as each took', async () => {
    await writeTenOldMinutesAndALateBatch(200);
    const events: { at: number; live: number; kind: 'asked' | 'allowed' }[] = [];
    const live = () => count('SELECT count(*) AS n FROM span_store');
    const report = await store.runRetention({
      ttlHours: { spans: 1 },
      maxRowsPerSlice: 250,
      pauseBetweenSlicesMs: 0,
      beforeSlice: async () => {
        events.push({ at: performance.now(), live: await live(), kind: 'asked' });
        // Held back for a while, as while the request rollup is behind: nothing may be exported meanwhile.
        await new Promise((resolve) => setTimeout(resolve, 150));
        events.push({ at: performance.now(), live: await live(), kind: 'allowed' });
      },
    });
    const spans = report.targets.find((t) => t.target === 'spans')!;
    expect(spans).toMatchObject({ status: 'ok', rowsExported: 1000 });
    const slices = Number(
      (
        await store.query<{ n: number }>("SELECT count(*) AS n FROM retention_runs WHERE state = 'published'")
      )[0]!.n,
    );
    const asked = events.filter((e) => e.kind === 'asked');
    expect(asked.length).toBe(slices);
    for (let i = 0; i < events.length; i += 2) expect(events[i + 1]!.live).toBe(events[i]!.live);
    expect(asked.map((e) => e.live)).toEqual([...asked.map((e) => e.live)].sort((a, b) => b - a));
  });

  it('starts no further slice once stopped, keeping what it exported', async () => {
    await writeTenOldMinutesAndALateBatch(400);
    const stop = new AbortController();
    let slices = 0;
    const report = await store.runRetention({
      ttlHours: { spans: 1 },
      maxRowsPerSlice: 250,
      pauseBetweenSlicesMs: 0,
      signal: stop.signal,
      beforeSlice: async () => {
        if (++slices === 2) stop.abort();
      },
    });
    const spans = report.targets.find((t) => t.target === 'spans')!;
    expect(spans.status).toBe('ok');
    expect(spans.rowsExported).toBeGreaterThan(0);
    expect(spans.rowsExported).toBeLessThan(1000);
    await expectNothingLost(spans.rowsExported);
  });

  it('ends a rest between slices as soon as it is stopped', async () => {
    await writeTenOldMinutesAndALateBatch(600);
    const stop = new AbortController();
    let slices = 0;
    const started = performance.now();
    // A minute's rest after the first slice; the stop comes during it and must not wait it out.
    const report = await store.runRetention({
      ttlHours: { spans: 1 },
      maxRowsPerSlice: 250,
      pauseBetweenSlicesMs: 60_000,
      signal: stop.signal,
      beforeSlice: async () => {
        if (++slices === 1) setTimeout(() => stop.abort(), 200);
      },
    });
    expect(performance.now() - started).toBeLessThan(30_000);
    expect(slices).toBe(1);
    const spans = report.targets.find((t) => t.target === 'spans')!;
    expect(spans.status).toBe('ok');
    await expectNothingLost(spans.rowsExported);
  });

  it('loses nothing written while an export runs', async () => {
    await store.writer.write(spansAt(T0, 2000, 7), []);
    let written = 2000;
    const writes: Promise<void>[] = [];
    const retention = store.runRetention({ ttlHours: { spans: 1 } });
    for (let i = 0; i < 20; i++) {
      // Half of them old enough to fall under the cutoff: they must be either exported or kept.
      const at = i % 2 === 0 ? T0 + BigInt(i) * 1_000_000_000n : T0 + 5n * HOUR_NS;
      writes.push(store.writer.write(spansAt(at, 40, 100 + i), []));
      written += 40;
    }
    await Promise.all([retention, ...writes]);
    await store.runRetention({ ttlHours: { spans: 1 } });
    expect(await count('SELECT count(*) AS n FROM spans')).toBe(written);
    expect(await count('SELECT count(DISTINCT span_id) AS n FROM spans')).toBe(written);
  });
});

describe('after a restart', () => {
  it('serves exported history from the first query and publishes files a crash left in staging', async () => {
    await store.writer.write(spansAt(T0, 100, 8), []);
    await store.writer.write(spansAt(T0 + 3n * HOUR_NS, 48, 9), []);
    const report = await store.runRetention({ ttlHours: { spans: 1 } });
    const file = report.targets[0]!.files[0]!;
    // Simulate a crash between COMMIT and the move: run still `committed`, file still in staging.
    await store.execute("UPDATE retention_runs SET state = 'committed'");
    await store.close();
    const staged = join(dir, 'export', '.staging', `${report.runId}-0`, file);
    mkdirSync(dirname(staged), { recursive: true });
    renameSync(join(dir, 'export', file), staged);

    store = await createStore({ dataDir: dir });
    expect(existsSync(join(dir, 'export', file))).toBe(true);
    expect(existsSync(join(dir, 'export', '.staging', `${report.runId}-0`))).toBe(false);
    expect(await count('SELECT count(*) AS n FROM spans')).toBe(148);
    const stats = await store.storageStats();
    expect(stats.exports.find((e) => e.target === 'spans')).toMatchObject({
      files: 1,
      oldestPartition: '2025-01-01T00',
    });
    expect(stats.tables.find((t) => t.table === 'span_store')?.rows).toBe(48);
    expect(stats.database.fileBytes).toBeGreaterThan(0);
    expect(stats.lastRetentionRuns).toEqual([
      expect.objectContaining({ target: 'spans', rowsExported: 100 }),
    ]);
    // RFC 3339 UTC whatever the server's time zone (finished_at is stored as local wall time).
    const finishedAt = stats.lastRetentionRuns[0]!.finishedAt!;
    expect(finishedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Math.abs(Date.parse(finishedAt) - Date.now())).toBeLessThan(60_000);
  });
});
