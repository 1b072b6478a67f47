import type { GroupDimension } from '@governor/conventions';
import {
  type DecodedMetricsRequest,
  type DecodedTraceRequest,
  createHopClassifier,
  normalizeMetricsRequest,
  normalizeTraceRequest,
} from '@governor/otlp';
import { llmdTraceRequest, sglangTraceRequest, vllmTraceRequest } from '@governor/otlp/fixtures';
import type { ClickHouseParam } from '@governor/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectClose } from '@governor/store/testing';
import {
  CLICKHOUSE_DB,
  type ClickHouseForSignals,
  startClickHouseForSignals,
} from '../../test/clickhouse-harness.ts';
import { createTempStore, ingest, testConfig } from '../../test/store-harness.ts';
import { createSignals } from '../create-signals.ts';
import { atMs, chatRequest, traceExport } from '../fixtures/trace-fixtures.ts';
import { rollUpOnClickHouse } from '../rollup/roll-up-on-clickhouse.ts';
import { pickSqlParams } from '../sql-params.ts';
import { buildWindowParams, foldWindowFlags } from './window-params.ts';
import { assembleWindow } from './assemble-window.ts';
import { CLICKHOUSE_WINDOW_SQL, clickHouseWindowQueries } from './clickhouse-window-queries.ts';
import { WINDOW_SQL, duckDbWindowQueries, runWindowQueries } from './window-rows.ts';

// The window queries' ClickHouse files return the rows their DuckDB files return, over the same
// requests (rolled up on each engine from the same spans): counts exactly, sums to 1e-9.

const CONFIG = testConfig({
  signals: { lateness_ms: 10_000 },
  slo: { ttft_ms: 40, e2e_ms: 330 },
  pools: [
    { name: 'a', model: 'llama-8b', region: 'eu', gpu_type: 'H100' },
    { name: 'b', model: 'qwen-32b' },
  ],
});
const classifier = createHopClassifier();
const inDb = (sql: string) => sql.replaceAll('{{database}}', CLICKHOUSE_DB);
const AGGREGATES_CH = inDb(CLICKHOUSE_WINDOW_SQL.aggregatesUncapped);
const PERCENTILES_CH = inDb(CLICKHOUSE_WINDOW_SQL.percentilesUncapped);
const AGGREGATES_CAPPED_CH = inDb(CLICKHOUSE_WINDOW_SQL.aggregates);
const PERCENTILES_CAPPED_CH = inDb(CLICKHOUSE_WINDOW_SQL.percentiles);
const GAUGES_CH = inDb(CLICKHOUSE_WINDOW_SQL.gauges);
const SPAN_FACTS_CH = inDb(CLICKHOUSE_WINDOW_SQL.spanFacts);

let ch: ClickHouseForSignals;
let duck: Awaited<ReturnType<typeof createTempStore>>;

function traffic(): DecodedTraceRequest[] {
  const requests = Array.from({ length: 60 }, (_, i) =>
    traceExport(
      `r${i}`,
      chatRequest({
        trace: `r${i}`,
        startMs: 1_000 + i * 2_000,
        queueMs: 2 + (i % 9),
        prefillMs: 15 + (i % 7) * 3,
        decodeMs: 150 + (i % 11) * 20,
        pool: ['a', 'b', 'c'][i % 3],
        tenant: `t${i % 4}`,
        priority: i % 3,
        outcome: i % 13 === 5 ? 'error' : i % 17 === 3 ? 'timeout' : 'success',
        inputTokens: 100 + i,
        outputTokens: 30 + (i % 5),
        cacheHit: i % 4 === 0,
        ...(i % 5 < 3
          ? { workflow: { id: `wf${Math.floor(i / 5)}`, type: 'agent', step: (i % 5) + 1, steps: 3 } }
          : {}),
      }).spans,
    ),
  );
  return [
    ...requests,
    vllmTraceRequest({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', startNs: atMs(20_000) }),
    sglangTraceRequest({ traceId64: '5bf92f3577b34da6', startNs: atMs(30_000) }),
    llmdTraceRequest({ traceId: '6bf92f3577b34da6a3ce929d0e0e4736', startNs: atMs(40_000) }),
  ];
}

/** Gauges as a Kubernetes fleet sends them: a pool-size gauge, pods' `up`, KV cache, queue, DCGM. */
function fleetMetrics(): DecodedMetricsRequest {
  const point = (ms: number, value: number, attributes: Record<string, string>) => ({
    attributes,
    startNs: 0n,
    timeNs: atMs(ms),
    value,
    count: null,
    sum: null,
    min: null,
    max: null,
    bucketCounts: null,
    explicitBounds: null,
    quantiles: null,
  });
  const every = (fromMs: number, toMs: number, stepMs: number) => {
    const out: number[] = [];
    for (let t = fromMs; t < toMs; t += stepMs) out.push(t);
    return out;
  };
  const metric = (name: string, points: ReturnType<typeof point>[]) => ({
    name,
    description: '',
    unit: '',
    type: 'gauge' as const,
    isMonotonic: false,
    temporality: 0,
    points,
  });
  const pods = [
    { pod: 'b-0', phase: 2_000, from: 0, to: 200_000 },
    { pod: 'b-1', phase: 7_000, from: 60_000, to: 200_000 },
    { pod: 'b-2', phase: 11_000, from: 0, to: 100_000 },
  ];
  return {
    resourceMetrics: [
      {
        resource: { 'service.name': 'fleet' },
        scopeMetrics: [
          {
            scope: { name: 'test', version: '1' },
            metrics: [
              metric('governor.pool.replicas', [
                ...every(0, 121_000, 30_000).map((t) => point(t, 2, { 'governor.pool': 'a' })),
                ...every(150_000, 200_000, 30_000).map((t) => point(t, 3, { 'governor.pool': 'a' })),
              ]),
              metric(
                'up',
                pods.flatMap((p) =>
                  every(p.from + p.phase, p.to, 15_000).map((t) =>
                    point(t, 1, { 'governor.pool': 'b', 'governor.replica': p.pod }),
                  ),
                ),
              ),
              metric(
                'vllm:kv_cache_usage_perc',
                every(5_000, 200_000, 15_000).flatMap((t, i) => [
                  point(t, (i % 10) / 10, { 'governor.pool': 'a', 'governor.replica': 'a-0' }),
                  point(t, ((i + 3) % 10) / 10, { 'governor.pool': 'b', 'governor.replica': 'b-0' }),
                ]),
              ),
              metric(
                'vllm:num_requests_waiting',
                every(5_000, 200_000, 15_000).flatMap((t, i) => [
                  point(t, i % 4, { 'governor.pool': 'b', 'governor.replica': 'b-0' }),
                  point(t, (i * 7) % 5, { 'governor.pool': 'b', 'governor.replica': 'b-1' }),
                ]),
              ),
              metric(
                'DCGM_FI_DEV_GPU_UTIL',
                every(3_000, 200_000, 15_000).flatMap((t) =>
                  ['b-0', 'b-1'].flatMap((pod) =>
                    ['GPU-0', 'GPU-1'].map((uuid) =>
                      point(t, 50, {
                        'governor.replica': pod,
                        UUID: `${pod}-${uuid}`,
                        modelName: 'NVIDIA H100 80GB HBM3',
                      }),
                    ),
                  ),
                ),
              ),
            ],
          },
        ],
      },
    ],
  };
}

beforeAll(async () => {
  ch = await startClickHouseForSignals();
  duck = await createTempStore();
  const exports = traffic();
  const metrics = fleetMetrics();
  await ingest(duck.store, exports, [metrics]);
  await ch.writer.write([], normalizeMetricsRequest(metrics, {}).rows);
  await createSignals(duck.store, CONFIG).refresh({ force: true });
  const rows = exports.flatMap((t) => normalizeTraceRequest(t, { classifier, aliases: {} }).rows);
  await ch.writer.write(rows, []);
  await rollUpOnClickHouse(ch.io, rows, CONFIG, 1n);
}, 120_000);

afterAll(async () => {
  await duck?.close();
  await ch?.stop();
});

const KEY = [
  'bucket',
  'k_pool',
  'k_model',
  'k_region',
  'k_gpu_type',
  'k_tenant',
  'k_priority',
  'k_workflow_type',
  'k_other',
  'pool',
  'in_filter',
];

/** Rows by their key; values as numbers (booleans as 0/1), NULL kept. */
function byKey(rows: readonly Record<string, unknown>[]): Map<string, Record<string, number | null>> {
  const out = new Map<string, Record<string, number | null>>();
  for (const row of rows) {
    const key = JSON.stringify(
      KEY.map((k) => (typeof row[k] === 'boolean' ? Number(row[k]) : (row[k] ?? null)) ?? null).map(String),
    );
    const values: Record<string, number | null> = {};
    for (const [column, v] of Object.entries(row)) {
      if (KEY.includes(column) || column === 'uncapped_groups') continue;
      values[column] = v === null || v === undefined ? null : typeof v === 'boolean' ? Number(v) : Number(v);
    }
    out.set(key, values);
  }
  return out;
}

describe('the window queries on ClickHouse', () => {
  const shapes: { by: GroupDimension[]; filter?: Partial<Record<GroupDimension, string>>; stepMs: number }[] =
    [
      { by: [], stepMs: 200_000 },
      { by: ['pool'], stepMs: 200_000 },
      { by: ['model', 'region'], stepMs: 200_000 },
      { by: ['tenant', 'priority'], stepMs: 200_000 },
      { by: ['gpu_type'], filter: { tenant: 't1' }, stepMs: 200_000 },
      { by: ['pool', 'workflow_type'], stepMs: 40_000 },
    ];
  const paramsFor = (shape: (typeof shapes)[number]) => {
    const params = buildWindowParams(
      {
        fromNs: atMs(0),
        toNs: atMs(200_000),
        stepNs: BigInt(shape.stepMs) * 1_000_000n,
        by: shape.by,
        filter: shape.filter ?? {},
        pendingAfterNs: atMs(200_000),
      },
      CONFIG,
    );
    const { pools_json: _pools, ...rest } = params;
    return {
      duck: params,
      ch: <Record<string, ClickHouseParam>>{
        ...rest,
        cfg_names: CONFIG.pools.map((p) => p.name),
        cfg_models: CONFIG.pools.map((p) => p.model ?? null),
        cfg_regions: CONFIG.pools.map((p) => p.region ?? null),
        cfg_gpu_types: CONFIG.pools.map((p) => p.gpu_type ?? null),
      },
    };
  };
  const duckRows = async (sql: string, params: ReturnType<typeof paramsFor>['duck']) => {
    const final = foldWindowFlags(sql, params);
    return (await duck.store.query(final, pickSqlParams(final, params))).filter((r) => r.bucket != null);
  };

  it.each(shapes)(
    'request counts and sums equal DuckDB’s by $by (filter $filter, step $stepMs ms)',
    async (shape) => {
      const params = paramsFor(shape);
      const expected = await duckRows(WINDOW_SQL.aggregatesUncapped, params.duck);
      const actual = await ch.reader.query(AGGREGATES_CH, params.ch);
      expect(expected.length).toBeGreaterThan(0);
      const want = byKey(expected);
      const got = byKey(actual);
      expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
      for (const [key, row] of want) {
        const other = got.get(key)!;
        for (const [column, value] of Object.entries(row)) {
          if (value === null) expect(other[column], `${key} ${column}`).toBeNull();
          else expect(other[column], `${key} ${column}`).toBeCloseTo(value, 9);
        }
      }
    },
  );

  it.each(shapes)(
    'percentiles equal DuckDB’s quantile_cont by $by (filter $filter, step $stepMs ms)',
    async (shape) => {
      const params = paramsFor(shape);
      const expected = await duckRows(WINDOW_SQL.percentilesUncapped, params.duck);
      const actual = await ch.reader.query(PERCENTILES_CH, params.ch);
      expect(expected.length).toBeGreaterThan(0);
      const keyOf = (row: Record<string, unknown>) =>
        JSON.stringify(
          KEY.slice(0, 9).map((k) => String(typeof row[k] === 'boolean' ? Number(row[k]) : (row[k] ?? null))),
        );
      const got = new Map(actual.map((r) => [keyOf(r), r]));
      expect([...got.keys()].sort()).toEqual(expected.map(keyOf).sort());
      let compared = 0;
      for (const row of expected) {
        const other = got.get(keyOf(row))!;
        for (const [column, value] of Object.entries(row)) {
          if (!column.endsWith('_q')) continue;
          const mine = other[column] as number[];
          if (value === null) expect(mine, `${keyOf(row)} ${column}`).toEqual([]);
          else {
            const theirs = value as number[];
            expect(mine.length, `${keyOf(row)} ${column}`).toBe(theirs.length);
            for (const [i, v] of theirs.entries())
              expect(Number(mine[i]), `${keyOf(row)} ${column}[${i}]`).toBeCloseTo(v, 9);
            compared++;
          }
        }
      }
      expect(compared).toBeGreaterThan(0);
    },
  );

  it.each([
    { by: ['tenant'], cap: 2 },
    { by: ['pool', 'priority'], cap: 3 },
  ] as { by: GroupDimension[]; cap: number }[])(
    'applies the group cap as DuckDB does: by $by, at most $cap groups and the rest as one',
    async ({ by, cap }) => {
      const params = paramsFor({ by, stepMs: 200_000 });
      params.duck.max_groups = cap;
      params.ch.max_groups = cap;
      const duckAgg = await duckRows(WINDOW_SQL.aggregates, params.duck);
      const chAgg = await ch.reader.query(AGGREGATES_CAPPED_CH, params.ch);
      const want = byKey(duckAgg);
      const got = byKey(chAgg);
      // Some requests went past the cap (k_other), and at most `cap` groups kept their key.
      expect([...want.keys()].some((k) => JSON.parse(k)[8] === '1')).toBe(true);
      expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
      for (const [key, row] of want)
        for (const [column, value] of Object.entries(row)) {
          if (value === null) expect(got.get(key)![column], `${key} ${column}`).toBeNull();
          else expect(got.get(key)![column], `${key} ${column}`).toBeCloseTo(value, 9);
        }
      const duckPct = await duckRows(WINDOW_SQL.percentiles, params.duck);
      const chPct = await ch.reader.query(PERCENTILES_CAPPED_CH, params.ch);
      expect(chPct.length).toBe(duckPct.length);
    },
  );

  it('learns the pools’ peak throughput as DuckDB does', async () => {
    const params = paramsFor({ by: [], stepMs: 20_000 });
    const duckSql = foldWindowFlags(WINDOW_SQL.learnedPeak, params.duck);
    const expected = await duck.store.query(duckSql, pickSqlParams(duckSql, params.duck));
    const actual = await ch.reader.query(inDb(CLICKHOUSE_WINDOW_SQL.learnedPeak), params.ch, {
      join_use_nulls: 1,
    });
    expect(expected.length).toBeGreaterThan(0);
    const norm = (rows: readonly Record<string, unknown>[]) =>
      rows
        .map((r) =>
          [String(r.pool), Number(r.peak_tokens_per_s).toPrecision(12), Number(r.minutes)].join(' '),
        )
        .sort();
    expect(norm(actual)).toEqual(norm(expected));
  });

  it.each(shapes)('pool gauges equal DuckDB’s (step $stepMs ms)', async (shape) => {
    const params = paramsFor(shape);
    const duckSql = foldWindowFlags(WINDOW_SQL.gauges, params.duck);
    const expected = await duck.store.query(duckSql, pickSqlParams(duckSql, params.duck));
    const actual = await ch.reader.query(GAUGES_CH, params.ch, { join_use_nulls: 1 });
    const norm = (rows: readonly Record<string, unknown>[]) =>
      rows
        .map((r) =>
          JSON.stringify(
            Object.keys(r)
              .sort()
              .map((k) => [
                k,
                r[k] === null || r[k] === undefined
                  ? null
                  : typeof r[k] === 'string' && k !== 'pool' && k !== 'gpu_product'
                    ? Number(r[k]).toPrecision(12)
                    : typeof r[k] === 'number'
                      ? r[k].toPrecision(12)
                      : r[k],
              ]),
          ),
        )
        .sort();
    expect(expected.filter((r) => r.replica_ns != null).length).toBeGreaterThan(1);
    expect(expected.some((r) => r.gpu_product != null)).toBe(true);
    expect(norm(actual)).toEqual(norm(expected));
  });

  it('reads the replicas and dimensions of the pools a gauge or the config leaves unknown, as DuckDB does', async () => {
    const params = paramsFor(shapes[1]!);
    for (const covered of [[], ['a'], ['a', 'b', 'c']]) {
      const duckSql = WINDOW_SQL.spanFacts;
      const duckParams = { ...params.duck, covered_json: JSON.stringify(covered) };
      const expected = await duck.store.query(duckSql, pickSqlParams(duckSql, duckParams));
      const actual = await ch.reader.query(SPAN_FACTS_CH, { ...params.ch, covered });
      const norm = (rows: readonly Record<string, unknown>[]) =>
        rows
          .map((r) =>
            JSON.stringify([
              String(r.bucket),
              r.pool ?? null,
              Number(r.span_replicas),
              r.model ?? null,
              r.region ?? null,
              r.gpu_type ?? null,
            ]),
          )
          .sort();
      expect(norm(actual), JSON.stringify(covered)).toEqual(norm(expected));
    }
  });

  it.each([
    [[]],
    [['pool']],
    [['model', 'region']],
    [['tenant', 'priority']],
    [['pool', 'workflow_type']],
  ] as GroupDimension[][][])('gives the snapshot DuckDB gives, group for group, by %j', async (by) => {
    // Every pool with a configured peak, so neither engine needs its learned one (not on ClickHouse yet).
    const pools = (
      await duck.store.query<{ pool: string }>(
        'SELECT DISTINCT pool FROM request_facts WHERE pool IS NOT NULL',
      )
    ).map((r) => r.pool);
    const config = testConfig({
      signals: { lateness_ms: 10_000 },
      slo: { ttft_ms: 40, e2e_ms: 330 },
      pricing: { gpu_hour_usd: { H100: 3.5 } },
      pools: pools.map((name) => ({
        name,
        ...(CONFIG.pools.find((p) => p.name === name) ?? {}),
        peak_tokens_per_s_per_replica: 2_000,
      })),
    });
    const signals = createSignals(duck.store, config);
    const atNs = atMs(200_000);
    const windowMs = 200_000;
    const expected = await signals.snapshot({ windowMs, by, atNs });
    expect(expected.groups.length).toBeGreaterThan(0);

    const watermark = await signals.watermarkNs();
    const spec = {
      fromNs: atNs - BigInt(windowMs) * 1_000_000n,
      toNs: atNs,
      stepNs: BigInt(windowMs) * 1_000_000n,
      by,
      filter: {},
      pendingAfterNs: watermark ?? atNs,
    };
    const params = buildWindowParams(spec, config);
    const rows = await runWindowQueries(clickHouseWindowQueries(ch.reader, params, config), params, config);
    const {
      buckets: [actual = []],
    } = await assembleWindow(rows, spec, config, async () => new Map());
    expectClose(actual, expected.groups, 'groups');
  });
});

describe('a series on ClickHouse', () => {
  it.each([[['pool']], [['tenant', 'gpu_type']]] as GroupDimension[][][])(
    'has the buckets the embedded store has, step for step, by %j',
    async (by) => {
      const config = testConfig({
        signals: { lateness_ms: 10_000 },
        slo: { ttft_ms: 40, e2e_ms: 330 },
        pricing: { gpu_hour_usd: { H100: 3.5 } },
        pools: [
          {
            name: 'a',
            model: 'llama-8b',
            region: 'eu',
            gpu_type: 'H100',
            peak_tokens_per_s_per_replica: 2_000,
          },
          { name: 'b', model: 'qwen-32b', peak_tokens_per_s_per_replica: 2_000 },
        ],
      });
      const spec = {
        fromNs: atMs(0),
        toNs: atMs(200_000),
        stepNs: 40_000_000_000n,
        by,
        filter: {},
        pendingAfterNs: atMs(190_000),
      };
      const params = buildWindowParams(spec, config);
      const noPeaks = async () => new Map<string, number>();
      const embedded = await assembleWindow(
        await runWindowQueries(duckDbWindowQueries(duck.store, params), params, config),
        spec,
        config,
        noPeaks,
      );
      const onClickHouse = await assembleWindow(
        await runWindowQueries(clickHouseWindowQueries(ch.reader, params, config), params, config),
        spec,
        config,
        noPeaks,
      );
      expect(embedded.buckets).toHaveLength(5);
      expect(embedded.buckets.flat().length).toBeGreaterThan(5);
      expectClose(onClickHouse.buckets, embedded.buckets, 'buckets');
    },
  );
});
