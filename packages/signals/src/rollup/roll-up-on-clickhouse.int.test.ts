import { ClickHouseLogLevel, type ClickHouseClient, createClient } from '@clickhouse/client';
import { type DecodedTraceRequest, createHopClassifier, normalizeTraceRequest } from '@governor/otlp';
import { llmdTraceRequest, sglangTraceRequest, vllmTraceRequest } from '@governor/otlp/fixtures';
import {
  type DescribedColumn,
  type Store,
  clickHouseSchemaStatements,
  createClickHouseRollupIo,
  createClickHouseWriter,
  describeDuckDbTable,
  requestFactsStatements,
} from '@governor/store';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ClickHouseCluster, startClickHouseCluster } from '../../../store/test/clickhouse-cluster.ts';
import { createTempStore, ingest, testConfig } from '../../test/store-harness.ts';
import { createSignals } from '../create-signals.ts';
import { atMs, chatRequest, traceExport, traceIdOf } from '../fixtures/trace-fixtures.ts';
import { rollUpOnClickHouse } from './roll-up-on-clickhouse.ts';

// A node's rollup onto a real two-shard ClickHouse cluster computes, row for row, the request facts
// the embedded store computes from the same spans — also when a task's steps arrive in two batches
// and the second must rewrite the first's task columns.

const DB = 'governor';
const CONFIG = testConfig({ signals: { lateness_ms: 10_000 }, slo: { ttft_ms: 1000 } });
const classifier = createHopClassifier();

let cluster: ClickHouseCluster;
let client: ClickHouseClient;
let factColumns: DescribedColumn[];
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  cluster = await startClickHouseCluster({ shards: 2 });
  factColumns = await describeDuckDbTable('request_facts');
  const clients = cluster.shards.map((s) =>
    createClient({ url: s.url, log: { level: ClickHouseLogLevel.OFF } }),
  );
  for (const c of clients) {
    for (const statement of [
      ...clickHouseSchemaStatements({ database: DB, cluster: cluster.cluster }),
      ...requestFactsStatements({ database: DB, cluster: cluster.cluster }, factColumns),
    ])
      await c.command({ query: statement });
  }
  await Promise.all(clients.slice(1).map((c) => c.close()));
  client = clients[0]!;
}, 90_000);

afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  await client.command({ query: `TRUNCATE TABLE ${DB}.span_store_local` });
});

afterAll(async () => {
  await client?.close();
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
    query: `SELECT * FROM ${DB}.request_facts FINAL
            WHERE (trace_id, version) GLOBAL IN (SELECT trace_id, max(version) FROM ${DB}.request_facts GROUP BY trace_id)`,
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
    await client.command({ query: `TRUNCATE TABLE ${DB}.request_facts_local` });
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
      await rollUpOnClickHouse(io, [...new Set(rows.map((r) => r.traceId))], CONFIG, version++);
    }
    await createSignals(store, CONFIG).refresh({ force: true });

    const expected = await embeddedFacts(store);
    expect(expected.length).toBe(7);
    const workflowStep1 = expected.find((r) => r.trace_id === traceIdOf('w-1'))!;
    expect(workflowStep1.task_requests).toBe(4);
    expect(comparable(await clickHouseFacts())).toEqual(comparable(expected));
  });
});
