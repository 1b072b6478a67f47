import { ClickHouseLogLevel, type ClickHouseClient, createClient } from '@clickhouse/client';
import {
  type DecodedTraceRequest,
  type SpanRow,
  createHopClassifier,
  normalizeTraceRequest,
} from '@governor/otlp';
import {
  llmdTraceRequest,
  sglangTraceRequest,
  syntheticTraceRequest,
  vllmTraceRequest,
} from '@governor/otlp/fixtures';
import {
  type DescribedColumn,
  type Store,
  clickHouseSchemaStatements,
  createClickHouseReader,
  createClickHouseRollupIo,
  createClickHouseWriter,
  describeDuckDbTable,
  requestFactsStatements,
} from '@governor/store';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ClickHouseCluster, startClickHouseCluster } from '@governor/store/testing';
import { createTempStore, ingest, testConfig } from '../../test/store-harness.ts';
import { createSignals } from '../create-signals.ts';
import { atMs, chatRequest, traceExport, traceIdOf } from '../fixtures/trace-fixtures.ts';
import { repairClickHouseRollup, createRepairSweep } from './clickhouse-repair-sweep.ts';
import { startClickHouseRollupLoop } from './clickhouse-rollup-loop.ts';
import { createClickHouseRollup, rollUpOnClickHouse } from './roll-up-on-clickhouse.ts';

// A node's rollup onto a real two-shard ClickHouse cluster computes, row for row, the request facts
// the embedded store computes from the same spans — also when a task's steps arrive in two batches
// and the second must rewrite the first's task columns.

const DB = 'governor';
const CONFIG = testConfig({ signals: { lateness_ms: 10_000 }, slo: { ttft_ms: 1000 } });
const classifier = createHopClassifier();

let cluster: ClickHouseCluster;
let client: ClickHouseClient;
let clients: ClickHouseClient[];
let factColumns: DescribedColumn[];
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  cluster = await startClickHouseCluster({ shards: 2 });
  factColumns = await describeDuckDbTable('request_facts');
  clients = cluster.shards.map((s) => createClient({ url: s.url, log: { level: ClickHouseLogLevel.OFF } }));
  for (const c of clients) {
    for (const statement of [
      ...clickHouseSchemaStatements({ database: DB, cluster: cluster.cluster }),
      ...requestFactsStatements({ database: DB, cluster: cluster.cluster }, factColumns),
    ])
      await c.command({ query: statement });
  }
  client = clients[0]!;
}, 90_000);

/** Empties a table on every shard (TRUNCATE of a local table reaches only its own server). */
async function truncate(table: string): Promise<void> {
  for (const c of clients) await c.command({ query: `TRUNCATE TABLE ${DB}.${table}_local` });
}

afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  await truncate('span_store');
  await truncate('request_facts');
});

afterAll(async () => {
  await Promise.all((clients ?? []).map((c) => c.close()));
  await cluster?.stop();
});

function exportsOf(prefix: string, steps: readonly number[]): DecodedTraceRequest[] {
  return steps.map((step) =>
    traceExport(
      `${prefix}-${step}`,
      chatRequest({
        trace: `${prefix}-${step}`,
        startMs: 1_000 + step * 4_000,
        queueMs: 3 + step,
        prefillMs: 20 + step,
        decodeMs: 200 + 30 * step,
        pool: step % 2 === 0 ? 'a' : 'b',
        tenant: 't1',
        workflow: { id: `${prefix}-wf`, type: 'agent', step, steps: 4 },
        outcome: step === 2 ? 'error' : 'success',
        inputTokens: 100,
        outputTokens: 50,
      }).spans,
    ),
  );
}

/** What the leader's repair works with, and an embedded store to compare with; closed after the test. */
async function leaderParts() {
  const { store, close } = await createTempStore();
  cleanups.push(close);
  const io = createClickHouseRollupIo(client, DB, factColumns);
  const reader = createClickHouseReader(client, { database: DB, readDeadlineMs: 10_000, factColumns });
  const rollup = createClickHouseRollup(io, CONFIG);
  cleanups.push(() => rollup.close());
  const writer = createClickHouseWriter(client, DB);
  const rowsOf = (batch: DecodedTraceRequest[]) =>
    batch.flatMap((t) => normalizeTraceRequest(t, { classifier, aliases: {} }).rows);
  return { store, io, reader, rollup, writer, rowsOf };
}

const REAL_SHAPES = (): DecodedTraceRequest[] => [
  vllmTraceRequest({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', startNs: atMs(2_000) }),
  sglangTraceRequest({ traceId64: '5bf92f3577b34da6', startNs: atMs(3_000) }),
  llmdTraceRequest({ traceId: '6bf92f3577b34da6a3ce929d0e0e4736', startNs: atMs(4_000) }),
];

/** Rows in one comparable form: every column, bigints and numbers as their text, ordered. */
function comparable(rows: readonly Record<string, unknown>[]): string[] {
  return rows
    .map((row) => {
      const out: Record<string, unknown> = {};
      for (const { name, type } of factColumns) {
        const v = row[name];
        out[name] =
          v === null || v === undefined
            ? null
            : type === 'BIGINT'
              ? String(v)
              : type === 'BOOLEAN'
                ? v === true || v === 1
                : type === 'DOUBLE'
                  ? Number(v).toPrecision(15)
                  : v;
      }
      return JSON.stringify(out);
    })
    .sort();
}

async function clickHouseFacts(): Promise<Record<string, unknown>[]> {
  const result = await client.query({
    query: `SELECT * FROM ${DB}.request_facts FINAL WHERE deleted = 0`,
    format: 'JSONEachRow',
    clickhouse_settings: { output_format_json_quote_denormals: 1 },
  });
  return result.json<Record<string, unknown>>();
}

async function embeddedFacts(store: Store): Promise<Record<string, unknown>[]> {
  return store.query('SELECT * FROM request_facts');
}

describe('the rollup onto ClickHouse', () => {
  it('computes the facts the embedded store computes, also when a task arrives in two batches', async () => {
    const { store, close } = await createTempStore();
    cleanups.push(close);
    const io = createClickHouseRollupIo(client, DB, factColumns);
    const writer = createClickHouseWriter(client, DB);
    const batches = [[...exportsOf('w', [1, 2]), ...REAL_SHAPES()], exportsOf('w', [3, 4])];
    let version = 1n;
    for (const batch of batches) {
      // The embedded store, as OTLP ingest writes it.
      await ingest(store, batch);
      // The node: the same rows to ClickHouse, then the rollup of the traces it just wrote.
      const rows = batch.flatMap((t) => normalizeTraceRequest(t, { classifier, aliases: {} }).rows);
      await writer.write(rows, []);
      await rollUpOnClickHouse(io, rows, CONFIG, version++);
    }
    await createSignals(store, CONFIG).refresh({ force: true });

    const expected = await embeddedFacts(store);
    expect(expected.length).toBe(7);
    const workflowStep1 = expected.find((r) => r.trace_id === traceIdOf('w-1'))!;
    expect(workflowStep1.task_requests).toBe(4);
    expect(comparable(await clickHouseFacts())).toEqual(comparable(expected));
  });

  it('replaces a trace’s requests when a later span joins them into one (the others become tombstones)', async () => {
    const config = testConfig({ signals: { lateness_ms: 10_000, task_idle_ms: 60_000 } });
    const { store, close } = await createTempStore();
    cleanups.push(close);
    const signals = createSignals(store, config);
    const io = createClickHouseRollupIo(client, DB, factColumns);
    const writer = createClickHouseWriter(client, DB);
    // One synthetic request whose child spans are 5 minutes apart (past the idle time): three
    // requests with one trace id, until the root covering them all arrives.
    const spans = normalizeTraceRequest(syntheticTraceRequest({ spans: 4, seed: 5, startNs: atMs(0) }), {
      classifier,
      aliases: {},
    }).rows;
    const root = spans.find((r) => !r.parentSpanId)!;
    const apart: SpanRow[] = spans
      .filter((r) => r.parentSpanId)
      .map((r, i) => ({
        ...r,
        startNs: r.startNs + BigInt(i) * 300_000_000_000n,
        endNs: r.endNs + BigInt(i) * 300_000_000_000n,
      }));
    let lastEndNs = root.endNs;
    for (const r of apart) if (r.endNs > lastEndNs) lastEndNs = r.endNs;
    const covering: SpanRow = { ...root, endNs: lastEndNs };
    // One rollup across the batches, as a node keeps it (its scratch store is emptied each time).
    const rollup = createClickHouseRollup(io, config);
    cleanups.push(() => rollup.close());
    let version = 10n;
    for (const batch of [...apart.map((r) => [r]), [covering]]) {
      await store.writer.write(batch, []);
      await signals.refresh({ force: true });
      await writer.write(batch, []);
      await rollup.rollUp(batch, version++);
      expect(comparable(await clickHouseFacts())).toEqual(comparable(await embeddedFacts(store)));
    }
    expect(await clickHouseFacts()).toHaveLength(1);
  });

  it('rolls up through the loop what batches of spans brought, as the embedded store does', async () => {
    const { store, close } = await createTempStore();
    cleanups.push(close);
    const rollup = createClickHouseRollup(createClickHouseRollupIo(client, DB, factColumns), CONFIG);
    // Runs of at most 40 spans: a trace's spans are split over runs, as under a backlog.
    const loop = startClickHouseRollupLoop(rollup, { intervalMs: 50, maxSpansPerRun: 40 });
    cleanups.push(async () => {
      await loop.stop();
      await rollup.close();
    });
    const writer = createClickHouseWriter(client, DB);
    // Twelve small batches (a workflow's steps, real-shape traces), some rolled up by the timer,
    // the rest by the final flush.
    const batches = [...exportsOf('loop', [1, 2, 3, 4]), ...REAL_SHAPES()].map(
      (t) => normalizeTraceRequest(t, { classifier, aliases: {} }).rows,
    );
    for (const rows of batches) {
      await store.writer.write(rows, []);
      await writer.write(rows, []);
      loop.add(rows);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await loop.flush();
    expect(loop.pending().spans).toBe(0);
    await createSignals(store, CONFIG).refresh({ force: true });
    expect(comparable(await clickHouseFacts())).toEqual(comparable(await embeddedFacts(store)));
  });

  it('repairs what a node acknowledged but never rolled up (it died): the leader’s sweep finds those traces and only those', async () => {
    const { store, io, reader, rollup, writer, rowsOf } = await leaderParts();
    // Node A rolled up its batch; node B acknowledged two and died before its rollup ran; then a
    // late span of one of A's traces reached B.
    const rolled = rowsOf([...exportsOf('a', [1, 2]), ...REAL_SHAPES()]);
    const lost = rowsOf([...exportsOf('b', [1, 2, 3]), ...exportsOf('c', [1])]);
    const lateSpan: SpanRow = {
      ...rolled[0]!,
      spanId: 'ffffffffffffff01',
      parentSpanId: rolled[0]!.spanId,
      isRoot: false,
    };
    for (const rows of [rolled, lost, [lateSpan]]) {
      await store.writer.write(rows, []);
      await writer.write(rows, []);
    }
    await rollup.rollUp(rolled, 1n);
    await createSignals(store, CONFIG).refresh({ force: true });
    const expected = await embeddedFacts(store);
    expect(comparable(await clickHouseFacts())).not.toEqual(comparable(expected));

    const range = { fromNs: atMs(0), toNs: atMs(60_000), maxTraces: 1_000 };
    const repaired = await repairClickHouseRollup(reader, io, rollup, { ...range, version: 2n });
    const lostTraces = new Set([...lost, lateSpan].map((s) => s.traceId));
    expect(repaired.traces).toBe(lostTraces.size);
    expect(comparable(await clickHouseFacts())).toEqual(comparable(expected));
    // Nothing left to repair: a second sweep finds no trace.
    expect((await repairClickHouseRollup(reader, io, rollup, { ...range, version: 3n })).traces).toBe(0);
  });

  it('leaves a live node’s traces to it: the leader’s sweep rolls up only what stayed unrolled past the settle time', async () => {
    const { store, io, reader, rollup, writer, rowsOf } = await leaderParts();
    // Node A's spans are rolled up; node B's wait for its next run; node C died with its own.
    const rolled = rowsOf(exportsOf('a', [1, 2]));
    const live = rowsOf(exportsOf('b', [1, 2]));
    const dead = rowsOf(exportsOf('c', [1, 2, 3]));
    for (const rows of [rolled, live, dead]) {
      await store.writer.write(rows, []);
      await writer.write(rows, []);
    }
    await rollup.rollUp(rolled, 1n);
    await createSignals(store, CONFIG).refresh({ force: true });
    let clockMs = 0;
    const repair = createRepairSweep(reader, io, rollup, { settleMs: 20_000, now: () => clockMs });
    const range = { fromNs: atMs(0), toNs: atMs(60_000), maxTraces: 2 };
    const traces = (rows: SpanRow[]) => new Set(rows.map((s) => s.traceId)).size;

    const first = await repair.sweep(range, 2n);
    expect(first).toMatchObject({ traces: 0, waiting: traces(live) + traces(dead) });
    clockMs += 19_999;
    expect(await repair.sweep(range, 3n)).toMatchObject({ traces: 0 });
    // Node B's run comes; then the settle time has passed for what is left: node C's traces.
    await rollup.rollUp(live, 4n);
    clockMs += 1;
    expect(await repair.sweep(range, 5n)).toMatchObject({ traces: traces(dead), waiting: 0 });
    expect(comparable(await clickHouseFacts())).toEqual(comparable(await embeddedFacts(store)));
    expect(await repair.sweep(range, 6n)).toMatchObject({ traces: 0, waiting: 0 });
  });
});
