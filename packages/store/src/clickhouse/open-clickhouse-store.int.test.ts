import { clickHouseStoreOf, parseGovernorConfig } from '@governor/conventions';
import {
  METRIC_POINT_COLUMNS,
  type MetricPointRow,
  SPAN_COLUMNS,
  type SpanRow,
  createColumnEncoder,
  createHopClassifier,
  normalizeMetricsRequest,
  normalizeTraceRequest,
} from '@governor/otlp';
import { fleetMetricsRequest, syntheticTraceRequest, vllmTraceRequest } from '@governor/otlp/fixtures';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClickHouseCluster, startClickHouseCluster } from '../../test/clickhouse-cluster.ts';
import { QueueFullError } from '../batch-writer.ts';
import { UserQueryError } from '../run-user-query.ts';
import { type ClickHouseStore, ClickHouseConfigError, openClickHouseStore } from './open-clickhouse-store.ts';

// The ClickHouse engine as the server uses it, on a real two-shard cluster: OTLP batches (as the
// decode workers lay them out) acknowledged once stored and handed to the rollup, ad-hoc SQL only
// through the read-only user, retention dropping whole days past their TTL on every shard, disk
// usage per table, readiness, and a clear error when the cluster cannot be reached.

const DAY_NS = 86_400_000_000_000n;
const NOW_NS = 1_767_225_600_000_000_000n; // 2026-01-01T00:00:00Z
const classifier = createHopClassifier();

let cluster: ClickHouseCluster;
let store: ClickHouseStore;
const acknowledged: SpanRow[][] = [];

function clickhouseConfig(extra: Record<string, unknown> = {}) {
  const parsed = parseGovernorConfig({
    store: {
      engine: 'clickhouse',
      clickhouse: {
        url: cluster.shards[0]!.url,
        shard_urls: cluster.shards.map((s) => s.url),
        readonly_user_env: 'CH_RO_USER',
        ...extra,
      },
    },
  });
  if (!parsed.ok || parsed.config.store.engine !== 'clickhouse') throw new Error('bad config');
  return clickHouseStoreOf(parsed.config.store);
}

beforeAll(async () => {
  cluster = await startClickHouseCluster({ shards: 2 });
  store = await openClickHouseStore({
    config: clickhouseConfig(),
    env: { CH_RO_USER: 'governor_ro' },
    readDeadlineMs: 10_000,
    maxQueuedRows: 1_000_000,
  });
  store.onSpansAcknowledged((spans) => acknowledged.push([...spans]));
}, 90_000);

afterAll(async () => {
  await store?.close();
  await cluster?.stop();
});

function spansAt(startNs: bigint, seed: number): SpanRow[] {
  return normalizeTraceRequest(syntheticTraceRequest({ spans: 300, seed, startNs }), {
    classifier,
    aliases: {},
  }).rows;
}

async function count(table: string): Promise<number> {
  const [row] = await store.reader.query<{ n: string }>(`SELECT count() AS n FROM {{database}}.${table}`);
  return Number(row?.n);
}

describe('the ClickHouse store', () => {
  it('acknowledges OTLP column batches once stored and hands their spans to the rollup', async () => {
    const spans = [
      ...spansAt(NOW_NS - DAY_NS / 2n, 1),
      ...normalizeTraceRequest(
        vllmTraceRequest({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', startNs: NOW_NS }),
        {
          classifier,
          aliases: {},
        },
      ).rows,
    ];
    const metrics: MetricPointRow[] = normalizeMetricsRequest(fleetMetricsRequest(NOW_NS), {}).rows;
    const encodeSpans = createColumnEncoder<SpanRow>(SPAN_COLUMNS);
    const encodeMetrics = createColumnEncoder<MetricPointRow>(METRIC_POINT_COLUMNS);
    const before = acknowledged.length;
    await store.writer.writeColumns({ spans: encodeSpans(spans), metrics: encodeMetrics(metrics) });
    expect(await count('span_store')).toBe(spans.length);
    expect(await count('metric_store')).toBe(metrics.length);
    const handed = acknowledged.slice(before).flat();
    expect(handed).toHaveLength(spans.length);
    expect(handed.map((s) => s.spanId).sort()).toEqual(spans.map((s) => s.spanId).sort());
    expect(handed.find((s) => s.traceId === '4bf92f3577b34da6a3ce929d0e0e4736')?.endNs).toBe(
      spans.find((s) => s.traceId === '4bf92f3577b34da6a3ce929d0e0e4736')?.endNs,
    );
    const stats = store.writer.stats();
    expect(stats.spansWritten).toBeGreaterThanOrEqual(spans.length);
    expect(stats.queuedRows).toBe(0);
  });

  it('refuses a batch past the queue bound while others are in flight, and loses nothing accepted', async () => {
    const small = await openClickHouseStore({
      config: clickhouseConfig(),
      env: { CH_RO_USER: 'governor_ro' },
      readDeadlineMs: 10_000,
      maxQueuedRows: 500,
    });
    try {
      const first = small.writer.write(spansAt(NOW_NS - 3n * DAY_NS, 2), []);
      await expect(small.writer.write(spansAt(NOW_NS - 3n * DAY_NS, 3), [])).rejects.toBeInstanceOf(
        QueueFullError,
      );
      await first;
      expect(small.writer.stats().rejectedQueueFull).toBe(1);
    } finally {
      await small.close();
    }
  });

  it('shares INSERTs among writes that arrive together, each acknowledged once its rows are stored', async () => {
    const before = await count('span_store');
    const flushes = store.writer.stats().flushes;
    const batches = Array.from({ length: 12 }, (_, i) => spansAt(NOW_NS - 2n * DAY_NS, 100 + i));
    const stored: number[] = [];
    await Promise.all(
      batches.map(async (spans) => {
        await store.writer.write(spans, []);
        stored.push(await count('span_store'));
      }),
    );
    const total = batches.reduce((n, b) => n + b.length, 0);
    expect(await count('span_store')).toBe(before + total);
    // Each acknowledgement came after at least its own rows were readable.
    for (const n of stored) expect(n).toBeGreaterThanOrEqual(before + 300);
    const inserts = store.writer.stats().flushes - flushes;
    expect(inserts).toBeGreaterThanOrEqual(1);
    expect(inserts).toBeLessThan(batches.length);
  });

  it('keeps each table’s newest event and the longest request per minute, and rebuilds both for tables that predate them', async () => {
    const factStart = NOW_NS - 2n * DAY_NS;
    await store.rollupIo.writeFacts(
      [{ trace_id: 'f'.repeat(32), start_ns: factStart, end_ns: factStart + 90_000_000_000n, span_count: 3 }],
      [],
      1n,
    );
    const read = async () => {
      const [row] = await store.reader.query<Record<string, string>>(
        `SELECT
           (SELECT toString(max(newest_ns)) FROM {{database}}.span_newest) AS span_newest,
           (SELECT toString(max(end_ns)) FROM {{database}}.span_store) AS span_scan,
           (SELECT toString(max(newest_ns)) FROM {{database}}.metric_newest) AS metric_newest,
           (SELECT toString(max(time_ns)) FROM {{database}}.metric_store) AS metric_scan,
           (SELECT toString(max(max_duration_ns)) FROM {{database}}.request_extent
              WHERE minute_ns = intDiv($start, 60000000000) * 60000000000) AS longest`,
        { start: factStart },
      );
      return row!;
    };
    const kept = await read();
    expect(kept.span_newest).toBe(kept.span_scan);
    expect(kept.metric_newest).toBe(kept.metric_scan);
    expect(kept.longest).toBe('90000000000');
    // A database written before these tables existed: opening it fills them in from its rows.
    for (const shard of cluster.shards)
      for (const table of ['span_newest', 'metric_newest', 'request_extent'])
        await fetch(`${shard.url}/`, { method: 'POST', body: `TRUNCATE TABLE governor.${table}_local` });
    expect((await read()).span_newest).toBe('0');
    const reopened = await openClickHouseStore({
      config: clickhouseConfig(),
      env: { CH_RO_USER: 'governor_ro' },
      readDeadlineMs: 10_000,
      maxQueuedRows: 1_000,
    });
    await reopened.close();
    expect(await read()).toEqual(kept);
  });

  it('answers readiness', async () => {
    await expect(store.ping()).resolves.toBeUndefined();
  });

  it('runs ad-hoc SELECTs through the read-only user, with a row cap', async () => {
    const result = await store.runUserQuery('SELECT trace_id, start_ns FROM span_store ORDER BY start_ns', {
      limit: 5,
      timeoutMs: 5_000,
    });
    expect(result.rows).toHaveLength(5);
    expect(result.truncated).toBe(true);
    expect(result.columns.map((c) => c.name)).toEqual(['trace_id', 'start_ns']);
  });

  it.each([
    ['INSERT INTO span_store_local (trace_id) VALUES (1)', 'GOV_ERR_SQL_NOT_READ_ONLY'],
    ['DROP TABLE span_store_local', 'GOV_ERR_SQL_NOT_READ_ONLY'],
    ['SELECT 1 SETTINGS readonly = 0', 'GOV_ERR_SQL_NOT_READ_ONLY'],
    ['SELECT 1; DROP TABLE span_store_local', 'GOV_ERR_SQL_MULTIPLE_STATEMENTS'],
    ["SELECT * FROM url('http://127.0.0.1:9/', CSV, 'a String')", 'GOV_ERR_SQL_NOT_READ_ONLY'],
    ["SELECT * FROM file('../../etc/passwd', CSV, 'a String')", 'GOV_ERR_SQL_NOT_READ_ONLY'],
    ["SELECT * FROM remote('127.0.0.1:9000', system.one)", 'GOV_ERR_SQL_NOT_READ_ONLY'],
    ['', 'GOV_ERR_SQL_EMPTY'],
  ])('refuses %j', async (sql, code) => {
    const error = await store.runUserQuery(sql, { limit: 10, timeoutMs: 5_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserQueryError);
    expect((error as UserQueryError).code).toBe(code);
    expect(await count('span_store')).toBeGreaterThan(0);
  });

  it('refuses ad-hoc SQL with a clear error when no read-only user is configured', async () => {
    const other = await openClickHouseStore({
      config: clickhouseConfig({ readonly_user_env: undefined }),
      env: {},
      readDeadlineMs: 10_000,
      maxQueuedRows: 1_000,
    });
    try {
      await expect(other.runUserQuery('SELECT 1', { limit: 1, timeoutMs: 1_000 })).rejects.toThrow(
        /readonly_user_env/,
      );
    } finally {
      await other.close();
    }
  });

  it('drops whole days past their TTL on every shard, and keeps the rest', async () => {
    await store.writer.write([...spansAt(NOW_NS - 10n * DAY_NS, 4), ...spansAt(NOW_NS - 9n * DAY_NS, 5)], []);
    const before = await count('span_store');
    const old = Number(
      (
        await store.reader.query<{ n: string }>(
          `SELECT count() AS n FROM {{database}}.span_store WHERE start_ns < ${NOW_NS - 8n * DAY_NS}`,
        )
      )[0]?.n,
    );
    expect(old).toBe(600);
    const report = await store.runRetention({ ttlHours: { spans: 24 * 7 }, nowNs: NOW_NS });
    const spans = report.targets.find((t) => t.target === 'spans');
    expect(spans).toMatchObject({ status: 'ok', rowsDeleted: old });
    expect(await count('span_store')).toBe(before - old);
    expect(report.targets.find((t) => t.target === 'metric_points')?.rowsDeleted).toBe(0);
    const storage = await store.storageStats();
    expect(storage.tables.find((t) => t.table === 'span_store')?.rows).toBe(before - old);
    expect(storage.tables.find((t) => t.table === 'span_store')?.bytes).toBeGreaterThan(0);
  });

  it('says what to check when the cluster cannot be reached', async () => {
    await expect(
      openClickHouseStore({
        config: clickhouseConfig({ url: 'http://127.0.0.1:1', shard_urls: ['http://127.0.0.1:1'] }),
        env: {},
        readDeadlineMs: 1_000,
        maxQueuedRows: 1_000,
      }),
    ).rejects.toThrow(ClickHouseConfigError);
  });
});
