import { type ClickHouseClient, ClickHouseLogLevel, createClient } from '@clickhouse/client';
import {
  type SpanRow,
  createHopClassifier,
  normalizeMetricsRequest,
  normalizeTraceRequest,
} from '@governor/otlp';
import {
  fleetMetricsRequest,
  llmdTraceRequest,
  sglangTraceRequest,
  syntheticTraceRequest,
  vllmTraceRequest,
} from '@governor/otlp/fixtures';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClickHouseCluster, startClickHouseCluster } from '../../test/clickhouse-cluster.ts';
import { clickHouseSchemaStatements } from './clickhouse-schema.ts';
import { ClickHouseWriteError, createClickHouseWriter } from './clickhouse-writer.ts';

// Spans and metric points through the Distributed tables of a real two-shard ClickHouse cluster
// (two clickhouse-server processes on loopback): every acknowledged row is readable from either
// server at once, a trace's spans sit on one shard, values come back as they went in, and a write
// while a shard is down is refused rather than acknowledged.

const T0 = 1_760_000_000_000_000_000n;
const DB = 'governor';
const classifier = createHopClassifier();

let cluster: ClickHouseCluster;
let clients: ClickHouseClient[];

beforeAll(async () => {
  cluster = await startClickHouseCluster({ shards: 2 });
  clients = cluster.shards.map((s) => createClient({ url: s.url, log: { level: ClickHouseLogLevel.OFF } }));
  for (const client of clients)
    for (const statement of clickHouseSchemaStatements({ database: DB, cluster: cluster.cluster }))
      await client.command({ query: statement });
}, 90_000);

afterAll(async () => {
  await Promise.all((clients ?? []).map((c) => c.close()));
  await cluster?.stop();
});

async function rows<T>(client: ClickHouseClient, query: string): Promise<T[]> {
  const result = await client.query({ query, format: 'JSONEachRow' });
  return result.json<T>();
}

function spanRows(): SpanRow[] {
  const requests = [
    syntheticTraceRequest({ spans: 2_000, seed: 3, startNs: T0 }),
    vllmTraceRequest({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', startNs: T0 }),
    sglangTraceRequest({ traceId64: '5bf92f3577b34da6', startNs: T0 }),
    llmdTraceRequest({ traceId: '6bf92f3577b34da6a3ce929d0e0e4736', startNs: T0 }),
  ];
  const out = requests.flatMap((r) => normalizeTraceRequest(r, { classifier, aliases: {} }).rows);
  const base = out[0]!;
  out.push(
    // Past 2^53 ns (precision a JSON number would lose), strings with 2- and 4-byte characters.
    { ...base, spanId: 'edge-1', startNs: 2n ** 62n + 1n, endNs: 2n ** 62n + 3n, tenant: 'á😀"\\\n' },
    {
      ...base,
      spanId: 'edge-2',
      durationMs: Number.NaN,
      costUsd: Number.POSITIVE_INFINITY,
      priority: 2 ** 31 - 1,
    },
  );
  return out;
}

describe('the ClickHouse writer', () => {
  it('acknowledges a batch once every shard holds it, keeps each trace on one shard, and stores the values it was given', async () => {
    const spans = spanRows();
    const metrics = normalizeMetricsRequest(fleetMetricsRequest(T0), {}).rows;
    await createClickHouseWriter(clients[0]!, DB).write(spans, metrics);

    // Read at once through the other server: nothing still queued on the receiving one.
    const [total] = await rows<{ n: string }>(clients[1]!, `SELECT count() AS n FROM ${DB}.span_store`);
    expect(Number(total!.n)).toBe(spans.length);
    const [points] = await rows<{ n: string }>(clients[1]!, `SELECT count() AS n FROM ${DB}.metric_store`);
    expect(Number(points!.n)).toBe(metrics.length);

    // Each shard holds whole traces, and both hold some.
    const tracesPerShard = await Promise.all(
      clients.map(
        async (c) =>
          new Set(
            (await rows<{ t: string }>(c, `SELECT DISTINCT trace_id AS t FROM ${DB}.span_store_local`)).map(
              (r) => r.t,
            ),
          ),
      ),
    );
    expect(tracesPerShard[0]!.size).toBeGreaterThan(0);
    expect(tracesPerShard[1]!.size).toBeGreaterThan(0);
    for (const trace of tracesPerShard[0]!) expect(tracesPerShard[1]!.has(trace)).toBe(false);

    // Values as written: Int64 beyond 2^53, strings, NaN and infinity, Int32 at its limit, NULLs.
    const [edge1] = await rows<Record<string, unknown>>(
      clients[1]!,
      `SELECT toString(start_ns) AS s, toString(end_ns) AS e, tenant FROM ${DB}.span_store WHERE span_id = 'edge-1'`,
    );
    expect(edge1).toEqual({
      s: (2n ** 62n + 1n).toString(),
      e: (2n ** 62n + 3n).toString(),
      tenant: 'á😀"\\\n',
    });
    const [edge2] = await rows<Record<string, unknown>>(
      clients[1]!,
      `SELECT isNaN(duration_ms) AS nan, isInfinite(cost_usd) AS inf, priority FROM ${DB}.span_store WHERE span_id = 'edge-2'`,
    );
    expect(edge2).toEqual({ nan: 1, inf: 1, priority: 2 ** 31 - 1 });
    const vllm = spans.find((s) => s.traceId === '4bf92f3577b34da6a3ce929d0e0e4736' && s.isRoot)!;
    const [stored] = await rows<Record<string, unknown>>(
      clients[0]!,
      `SELECT name, pool, model, input_tokens, ttft_ms, parent_span_id, is_root FROM ${DB}.span_store WHERE span_id = '${vllm.spanId}'`,
    );
    expect(stored).toEqual({
      name: vllm.name,
      pool: vllm.pool,
      model: vllm.model,
      input_tokens: vllm.inputTokens,
      ttft_ms: vllm.ttftMs,
      parent_span_id: vllm.parentSpanId,
      is_root: 1,
    });
  });

  it('keeps one copy of a batch the client sent again after a refused insert', async () => {
    const spans = normalizeTraceRequest(
      syntheticTraceRequest({ spans: 600, seed: 11, startNs: T0, idPrefix: 'a9a9a9a9' }),
      { classifier, aliases: {} },
    ).rows;
    const metrics = normalizeMetricsRequest(fleetMetricsRequest(T0 + 7_000_000_000n, 'retry-pool'), {}).rows;
    expect(metrics.filter((m) => m.pool === 'retry-pool').length).toBeGreaterThan(0);
    const writer = createClickHouseWriter(clients[0]!, DB);
    await writer.write(spans, metrics);
    await writer.write(spans, metrics);
    const count = async (query: string) => Number((await rows<{ n: string }>(clients[1]!, query))[0]!.n);
    expect(
      await count(`SELECT count() AS n FROM ${DB}.span_store FINAL WHERE trace_id LIKE 'a9a9a9a9%'`),
    ).toBe(spans.length);
    expect(await count(`SELECT count() AS n FROM ${DB}.metric_store FINAL WHERE pool = 'retry-pool'`)).toBe(
      metrics.filter((m) => m.pool === 'retry-pool').length,
    );
    // Without FINAL both copies are there until a merge.
    expect(await count(`SELECT count() AS n FROM ${DB}.span_store WHERE trace_id LIKE 'a9a9a9a9%'`)).toBe(
      spans.length * 2,
    );
  });

  it('refuses a batch while a shard is down instead of acknowledging it', async () => {
    await cluster.kill(1);
    const spans = normalizeTraceRequest(
      syntheticTraceRequest({ spans: 400, seed: 9, startNs: T0, idPrefix: 'dead0000' }),
      {
        classifier,
        aliases: {},
      },
    ).rows;
    const error = await createClickHouseWriter(clients[0]!, DB)
      .write(spans, [])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClickHouseWriteError);
    expect((error as ClickHouseWriteError).message).toMatch(/span_store/);
  });
});
