import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  type ControlRepository,
  createDuckDbRepository,
  createDuckDbRollbackStore,
  createPostgresRepository,
  createPostgresRollbackStore,
} from '@governor/control';
import type { GovernorConfig } from '@governor/conventions';
import {
  METRIC_POINT_COLUMNS,
  type MetricPointRow,
  SPAN_COLUMNS,
  type SpanColumnType,
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
import {
  type SignalsSnapshotDetail,
  type TraceSummary,
  createClickHouseRollup,
  createSignals,
  startClickHouseRollupLoop,
} from '@governor/signals';
import {
  type ClickHouseStore,
  type DescribedColumn,
  createStore,
  describeDuckDbTable,
  openClickHouseStore,
} from '@governor/store';
import {
  type ClickHouseCluster,
  type PostgresServer,
  startClickHouseCluster,
  startPostgres,
  expectClose,
} from '@governor/store/testing';
import { RECORDS_T0_NS, auditEntry, scaleRecord } from '@governor/control/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { loadConfig } from '../load-config.ts';
import { COMMAND_OPTIONS } from './command-options.ts';
import { runMigrateCommand } from './migrate-command.ts';
import { parseArgs } from './parse-args.ts';

// `governor migrate` on real engines: an embedded store with spans (synthetic traffic and vLLM,
// SGLang and llm-d traces), metric points, rolled-up request facts, recommendations, audit entries,
// policies, a rollback value and alert state, copied into a two-shard ClickHouse cluster and a
// PostgreSQL 15: every table's rows arrive, equal field for field, the signals read from the
// cluster equal the embedded store's, a second run duplicates nothing, and --dry-run writes nothing.

type RecommendationRecord = Parameters<ControlRepository['saveRecommendations']>[0][number];
type AuditEntry = Parameters<ControlRepository['appendAudit']>[0][number];

const PG_ENV = 'MIGRATE_TEST_POSTGRES_URL';
/** Ten seconds before midnight UTC: the traffic crosses a day, so ClickHouse holds two partitions. */
const T0_MS = Date.UTC(2025, 5, 1, 23, 59, 50);
const T0_NS = BigInt(T0_MS) * 1_000_000n;
const T = RECORDS_T0_NS;
const REPO = resolve(import.meta.dirname, '../../../..');
const classifier = createHopClassifier();

let cluster: ClickHouseCluster;
let postgres: PostgresServer;
let dir: string;
let dataDir: string;
let configFile: string;
let config: GovernorConfig;
let env: NodeJS.ProcessEnv;
let spans: SpanRow[];
let points: MetricPointRow[];
let factColumns: DescribedColumn[];
/** What the embedded store held, read before it was closed. */
const source: {
  counts: Record<string, number>;
  facts: Record<string, unknown>[];
  snapshot: SignalsSnapshotDetail | null;
  traces: TraceSummary[];
  recommendations: RecommendationRecord[];
  audit: AuditEntry[];
  auditSeqs: unknown[][];
  stateRows: Record<string, Record<string, unknown>[]>;
} = {
  counts: {},
  facts: [],
  snapshot: null,
  traces: [],
  recommendations: [],
  audit: [],
  auditSeqs: [],
  stateRows: {},
};

const SNAPSHOT = { windowMs: 30_000, by: ['pool' as const], atNs: T0_NS + 25_000_000_000n };
const ALERT_TABLES = [
  'alert_instances',
  'alert_notification_groups',
  'alert_engine_state',
  'alert_deliveries',
  'alert_delivery_attempts',
  'control_rollback_values',
] as const;
const CLICKHOUSE_TABLES = ['span_store', 'metric_store', 'request_facts'] as const;
const POSTGRES_TABLES = ['control_recommendations', 'control_audit', 'control_policies', ...ALERT_TABLES];

/** Runs the command in-process; stdout and stderr as text. */
async function migrate(
  argv: string[],
  runEnv: NodeJS.ProcessEnv = env,
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk);
    return true;
  });
  try {
    const code = await runMigrateCommand(
      parseArgs(argv, COMMAND_OPTIONS.migrate, 'governor migrate'),
      runEnv,
    );
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

/** One statement on one shard over HTTP, its rows as TabSeparated lines. */
async function onShard(url: string, query: string): Promise<string> {
  const response = await fetch(`${url}/`, { method: 'POST', body: query });
  const text = await response.text();
  if (!response.ok) throw new Error(text);
  return text.trim();
}

async function withPostgres<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: postgres.url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

async function withClickHouse<T>(fn: (store: ClickHouseStore) => Promise<T>): Promise<T> {
  const store = await openClickHouseStore({
    config: 'clickhouse' in config.store ? config.store.clickhouse! : (undefined as never),
    env,
    readDeadlineMs: 60_000,
    maxQueuedRows: 100_000,
  });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

async function clickHouseCounts(store: ClickHouseStore, final: boolean): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of CLICKHOUSE_TABLES) {
    const where = table === 'request_facts' && final ? ' WHERE deleted = 0' : '';
    const [row] = await store.reader.query<{ n: string }>(
      `SELECT count() AS n FROM {{database}}.${table}${final ? ' FINAL' : ''}${where}`,
    );
    out[table] = Number(row?.n);
  }
  return out;
}

async function postgresCounts(): Promise<Record<string, number>> {
  return withPostgres(async (client) => {
    const out: Record<string, number> = {};
    for (const table of POSTGRES_TABLES)
      out[table] = Number((await client.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
    return out;
  });
}

/** A row as the writer's row object, from either engine's JSON-safe values (Int64 as text or number). */
function asRowObject<Row>(
  columns: readonly { column: string; field: keyof Row; type: SpanColumnType }[],
  row: Record<string, unknown>,
  byField = false,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { column, field, type } of columns) {
    const value = row[byField ? (field as string) : column] ?? null;
    out[field as string] =
      value === null ? null : type === 'BIGINT' ? BigInt(value as string | number | bigint) : value;
  }
  return out;
}

/** Doubles that differ by more than one unit in the last place, or any other value that differs. */
let ulpDifferences = 0;
function rowDifferences(
  actual: readonly Record<string, unknown>[],
  expected: readonly Record<string, unknown>[],
  doubles: ReadonlySet<string>,
): string[] {
  const out: string[] = [];
  if (actual.length !== expected.length) return [`${actual.length} rows, expected ${expected.length}`];
  expected.forEach((e, i) => {
    const a = actual[i]!;
    for (const key of new Set([...Object.keys(a), ...Object.keys(e)])) {
      const [x, y] = [a[key], e[key]];
      if (Object.is(x, y) || (typeof x === 'bigint' && x === y)) continue;
      // ClickHouse 18.16 parses a float's text (JSONEachRow, VALUES, toFloat64) up to one ulp off
      // the nearest double (probe: 46.734261 is stored as 46.734261000000004): every text insert,
      // the nodes' own ingest included, lands within one ulp.
      if (doubles.has(key) && typeof x === 'number' && typeof y === 'number') {
        if (Math.abs(x - y) <= Number.EPSILON * Math.abs(y)) {
          ulpDifferences++;
          continue;
        }
      }
      if (
        JSON.stringify(x, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v)) ===
        JSON.stringify(y, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))
      )
        continue;
      if (out.length < 20) out.push(`row ${i} ${key}: ${String(x)}, expected ${String(y)}`);
    }
  });
  return out;
}

const doublesOf = (
  columns: readonly { type: string; field?: unknown; column?: string; name?: string }[],
  key: 'field' | 'column' | 'name',
) => new Set(columns.filter((c) => c.type === 'DOUBLE').map((c) => String(c[key])));

/** request_facts rows compared by DuckDB's column types: BIGINT as bigint, BOOLEAN as boolean. */
function normalizeFacts(rows: Record<string, unknown>[]): Record<string, unknown>[] {
  return rows
    .map((row) => {
      const out: Record<string, unknown> = {};
      for (const { name, type } of factColumns) {
        const v = row[name] ?? null;
        out[name] =
          v === null
            ? null
            : type === 'BIGINT'
              ? BigInt(v as string | number)
              : type === 'BOOLEAN'
                ? v === true || v === 1 || v === '1'
                : type === 'VARCHAR'
                  ? v
                  : Number(v);
      }
      return out;
    })
    .sort((a, b) => `${a.trace_id}|${a.start_ns}`.localeCompare(`${b.trace_id}|${b.start_ns}`));
}

/** State rows from either database: integers as text (pg gives BIGINT as text, DuckDB as a number). */
function normalizeState(
  rows: Record<string, unknown>[],
  columns: readonly string[],
): Record<string, unknown>[] {
  return rows
    .map((row) =>
      Object.fromEntries(
        columns.map((c) => {
          const v = row[c] ?? null;
          return [c, typeof v === 'number' && Number.isInteger(v) ? String(v) : v];
        }),
      ),
    )
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

beforeAll(async () => {
  [cluster, postgres] = await Promise.all([startClickHouseCluster({ shards: 2 }), startPostgres()]);
  dir = mkdtempSync(join(tmpdir(), 'governor-migrate-'));
  dataDir = join(dir, 'data');
  configFile = join(dir, 'scale-out.yaml');
  writeFileSync(
    configFile,
    stringify({
      signals: { lateness_ms: 0 },
      slo: { ttft_ms: 500, e2e_ms: 5_000 },
      pricing: { gpu_hour_usd: { H100: 3.5, A100: 2 } },
      pools: [
        { name: 'llama-8b-h100', model: 'meta-llama/Llama-3.1-8B-Instruct', gpu_type: 'H100' },
        { name: 'llama-70b-h100', model: 'meta-llama/Llama-3.1-70B-Instruct', gpu_type: 'H100' },
        { name: 'qwen-32b-a100', model: 'Qwen/Qwen2.5-32B-Instruct', gpu_type: 'A100' },
      ],
      policies: [{ name: 'scale-auto', match: { kind: ['scale'] }, auto_apply: true }],
      store: {
        engine: 'clickhouse',
        clickhouse: { url: cluster.shards[0]!.url, shard_urls: cluster.shards.map((s) => s.url) },
        postgres: { url_env: PG_ENV },
      },
    }),
  );
  env = { ...process.env, [PG_ENV]: postgres.url };
  config = loadConfig(configFile, env);
  factColumns = await describeDuckDbTable('request_facts');

  // The embedded store of a Governor that ran for a while.
  const store = await createStore({ dataDir, threads: 2, memoryLimit: '1GB', backgroundNice: null });
  spans = [
    syntheticTraceRequest({ spans: 20_000, seed: 7, startNs: T0_NS, idPrefix: 'a1b2c3d4' }),
    vllmTraceRequest({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', startNs: T0_NS + 2_000_000_000n }),
    sglangTraceRequest({ traceId64: '5bf92f3577b34da6', startNs: T0_NS + 3_000_000_000n }),
    llmdTraceRequest({ traceId: '6bf92f3577b34da6a3ce929d0e0e4736', startNs: T0_NS + 4_000_000_000n }),
  ].flatMap((t) => normalizeTraceRequest(t, { classifier, aliases: {} }).rows);
  points = ['llama-8b-h100', 'qwen-32b-a100'].flatMap((pool) =>
    Array.from(
      { length: 6 },
      (_, i) =>
        normalizeMetricsRequest(fleetMetricsRequest(T0_NS + BigInt(i) * 5_000_000_000n, pool), {}).rows,
    ).flat(),
  );
  for (let i = 0; i < spans.length; i += 5_000) await store.writer.write(spans.slice(i, i + 5_000), []);
  await store.writer.write([], points);
  const signals = createSignals(store, config);
  await signals.refresh({ force: true });

  const repository = createDuckDbRepository(store);
  await repository.saveRecommendations([
    scaleRecord('rec-1', 1),
    scaleRecord('rec-2', 2, {
      state: 'applied',
      appliedNs: T + 3n * 60_000_000_000n + 7n,
      actionId: 'act-2',
      policy: 'scale-auto',
      gate: 'auto',
      hold: null,
    }),
  ]);
  await repository.appendAudit([
    auditEntry('aud-1', 'rec-1', 1),
    auditEntry('aud-2', 'rec-2', 2),
    auditEntry('aud-3', 'rec-2', 3),
  ]);
  await repository.savePolicies({
    configHash: 'sha256:0123',
    policies: config.policies,
    updatedBy: 'token:admin',
    updatedAtMs: 1_765_000_000_123,
  });
  await createDuckDbRollbackStore(store).remember({
    actuator: 'kubernetes',
    recommendationId: 'rec-2',
    actionId: 'act-2',
    object: '/apis/apps/v1/namespaces/llm/deployments/llama-8b/scale',
    value: { replicas: 2 },
    recordedAtMs: 1_765_000_000_456,
  });
  // Alert state as the alert engine writes it (migration 0030's tables).
  await store.execute(
    `INSERT INTO alert_instances VALUES
      ('al-1', 'fp-1', 'ttft-high', 'signal', 'firing', '{"pool":"llama-8b-h100"}', '{"summary":"TTFT high"}',
       ['oncall', 'slack'], 2400.5, 1765000000000000001, 1765000000000000002, NULL, 1765000000000000003, 1765000000000),
      ('al-0', 'fp-0', 'ttft-high', 'signal', 'resolved', '{"pool":"qwen-32b-a100"}', '{}',
       [], NULL, 1764000000000000001, 1764000000000000002, 1764000000000000009, 1764000000000000009, 1764000000000)`,
  );
  await store.execute(
    `INSERT INTO alert_notification_groups VALUES ('grp-1', 'oncall', '{"id":"grp-1","receiver":"oncall","lastSentMs":1765000000000}', 1765000000001)`,
  );
  await store.execute(
    "UPDATE alert_engine_state SET value = '1765000000000000009' WHERE name = 'evaluated_until_ns'",
  );
  await store.execute(
    `INSERT INTO alert_deliveries VALUES
      ('del-1', 1, 'notification', 'oncall', 'webhook', 'grp-1', 'firing', ['fp-1'], '{"status":"firing"}',
       'delivered', 1, 1765000000010, 1765000360010, NULL, 1765000000020, 1765000000030, 200, NULL),
      ('del-2', 2, 'notification', 'slack', 'slack', 'grp-1', 'firing', ['fp-1', 'fp-0'], '{"status":"firing"}',
       'dead', 2, 1765000000040, 1765000000050, NULL, 1765000000060, 1765000000070, 503, 'HTTP 503')`,
  );
  await store.execute(
    `INSERT INTO alert_delivery_attempts VALUES
      ('del-1', 1, 1765000000020, 12.5, 'ok', 200, NULL, NULL),
      ('del-2', 1, 1765000000045, 30.25, 'retryable', 503, 'HTTP 503', 1000),
      ('del-2', 2, 1765000000060, 31.5, 'failed', 503, 'HTTP 503', NULL)`,
  );

  for (const [table, sql] of [
    ['span_store', 'span_store'],
    ['metric_store', 'metric_store'],
    ['request_facts', 'request_facts'],
    ...POSTGRES_TABLES.map((t) => [t, t]),
  ] as const) {
    const [row] = await store.query<{ n: number }>(`SELECT count(*) AS n FROM ${sql}`);
    source.counts[table] = Number(row?.n);
  }
  source.facts = normalizeFacts(await store.query('SELECT * FROM request_facts'));
  source.snapshot = await signals.snapshot(SNAPSHOT);
  source.traces = await signals.traces({ limit: 50 });
  source.recommendations = await repository.listRecommendations({ limit: 100 });
  source.audit = await repository.listAudit({ limit: 100 });
  source.auditSeqs = (
    await store.query<{ seq: number; id: string }>('SELECT seq, id FROM control_audit ORDER BY seq')
  ).map((r) => [String(r.seq), r.id]);
  for (const table of ALERT_TABLES) source.stateRows[table] = await store.query(`SELECT * FROM ${table}`);
  await store.close();
}, 180_000);

afterAll(async () => {
  await cluster?.stop();
  await postgres?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('governor migrate refuses', () => {
  it('a config whose engine is not clickhouse', async () => {
    const embedded = join(dir, 'embedded.yaml');
    writeFileSync(embedded, 'slo: {ttft_ms: 500}\n');
    const run = await migrate(['--config', embedded, '--from', dataDir]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/has store\.engine: duckdb: migrate copies into the engine/);
  });

  it('when the PostgreSQL variable is unset', async () => {
    const run = await migrate(['--config', configFile, '--from', dataDir], { ...env, [PG_ENV]: undefined });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`${PG_ENV} (store.postgres.url_env) is not set`);
  });

  it('a --from without a Governor store, and creates nothing there', async () => {
    const empty = mkdtempSync(join(dir, 'empty-'));
    const run = await migrate(['--config', configFile, '--from', empty]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/no Governor store in .*empty-.* \(no governor\.duckdb\)/);
    expect(readdirSync(empty)).toEqual([]);
  });

  it('a store another process holds open (a Governor still running on it)', async () => {
    // The DuckDB file lock, as a running Governor holds it.
    const holder: ChildProcess = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { DuckDBInstance } from '@duckdb/node-api';
         await DuckDBInstance.create(${JSON.stringify(join(dataDir, 'governor.duckdb'))});
         console.log('open'); setInterval(() => {}, 1000);`,
      ],
      { cwd: join(REPO, 'packages/store'), stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise<void>((done, fail) => {
        holder.stdout?.on('data', (d: Buffer) => d.toString().includes('open') && done());
        holder.once('exit', (code) => fail(new Error(`the lock holder exited ${code}`)));
      });
      const run = await migrate(['--config', configFile, '--from', dataDir]);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(
        /is in use by another process — a Governor still running on it\? Stop it first/,
      );
    } finally {
      holder.kill('SIGKILL');
      await new Promise((done) => holder.once('exit', done));
    }
  });
});

describe('governor migrate', () => {
  it('--dry-run prints the rows it would copy and writes nothing to ClickHouse or PostgreSQL', async () => {
    const run = await migrate(['--config', configFile, '--from', dataDir, '--dry-run']);
    expect(run.code, run.stderr).toBe(0);
    console.info(run.stdout);
    expect(run.stdout).toMatch(/^dry run: nothing written to ClickHouse/);
    for (const [table, n] of Object.entries(source.counts))
      expect(run.stdout).toMatch(new RegExp(`\\n${table} +\\| \\w+ +\\| ${n}\\s*\\n`));
    for (const shard of cluster.shards)
      expect(await onShard(shard.url, "SELECT count() FROM system.databases WHERE name = 'governor'")).toBe(
        '0',
      );
    const tables = await withPostgres(
      async (client) =>
        (
          await client.query(
            "SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = 'public'",
          )
        ).rows[0].n,
    );
    expect(Number(tables)).toBe(0);
  });

  it('copies every table: counts equal, rows equal field for field', async () => {
    const run = await migrate(['--config', configFile, '--from', dataDir]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(
      new RegExp(`migrate: span_store ${spans.length} / ${spans.length} rows \\(100%\\), \\d+ rows/s`),
    );
    expect(run.stdout).toMatch(
      /^migrated .* into ClickHouse http:\/\/127\.0\.0\.1:\d+ \(database governor\) and PostgreSQL/,
    );
    const spanLine = /\nspan_store +\| ClickHouse +\| (\d+) +\| ([\d.]+) +\| (\d+)/.exec(run.stdout);
    expect(spanLine?.[1]).toBe(String(spans.length));
    console.info(`${run.stderr}${run.stdout}`);

    const counts = await withClickHouse((store) => clickHouseCounts(store, true));
    const expected = Object.fromEntries(CLICKHOUSE_TABLES.map((t) => [t, source.counts[t]]));
    expect(counts).toEqual(expected);
    expect(await postgresCounts()).toEqual(
      Object.fromEntries(POSTGRES_TABLES.map((t) => [t, source.counts[t]])),
    );

    await withClickHouse(async (store) => {
      // Spans: every 400th synthetic span and every span of the runtimes' fixtures.
      const sample = spans.filter((s, i) => i % 400 === 0 || !s.traceId.startsWith('a1b2c3d4'));
      const ids = [...new Set(sample.map((s) => `'${s.traceId}'`))].join(', ');
      const stored = await store.reader.query(
        `SELECT * FROM {{database}}.span_store FINAL WHERE trace_id IN (${ids})`,
      );
      const byId = new Map(stored.map((r) => [`${r.trace_id}/${r.span_id}`, r]));
      expect(sample.filter((s) => !byId.has(`${s.traceId}/${s.spanId}`))).toEqual([]);
      expect(
        rowDifferences(
          sample.map((s) => asRowObject<SpanRow>(SPAN_COLUMNS, byId.get(`${s.traceId}/${s.spanId}`)!)),
          sample.map((s) =>
            asRowObject<SpanRow>(SPAN_COLUMNS, s as unknown as Record<string, unknown>, true),
          ),
          doublesOf(SPAN_COLUMNS, 'field'),
        ),
      ).toEqual([]);
      // Metric points: all of them.
      const key = (p: Record<string, unknown>) =>
        JSON.stringify([p.name, String(p.timeNs), p.attributes, p.resource]);
      const storedPoints = (await store.reader.query(`SELECT * FROM {{database}}.metric_store FINAL`))
        .map((r) => asRowObject<MetricPointRow>(METRIC_POINT_COLUMNS, r))
        .sort((a, b) => key(a).localeCompare(key(b)));
      const written = points
        .map((p) =>
          asRowObject<MetricPointRow>(METRIC_POINT_COLUMNS, p as unknown as Record<string, unknown>, true),
        )
        .sort((a, b) => key(a).localeCompare(key(b)));
      expect(rowDifferences(storedPoints, written, doublesOf(METRIC_POINT_COLUMNS, 'field'))).toEqual([]);
      // Request facts: all of them, column for column, as one version below any node's.
      const facts = await store.reader.query(
        `SELECT * FROM {{database}}.request_facts FINAL WHERE deleted = 0`,
      );
      expect(new Set(facts.map((f) => String(f.version)))).toEqual(new Set(['1']));
      expect(rowDifferences(normalizeFacts(facts), source.facts, doublesOf(factColumns, 'name'))).toEqual([]);
      console.info(`doubles one ulp off after ClickHouse's float parsing: ${ulpDifferences}`);
    });

    // State, through the PostgreSQL repositories the nodes use.
    await withPostgres(async (client) => {
      const repository = createPostgresRepository(client);
      expect(await repository.listRecommendations({ limit: 100 })).toEqual(source.recommendations);
      expect(await repository.listAudit({ limit: 100 })).toEqual(source.audit);
      expect(
        (await client.query('SELECT seq, id FROM control_audit ORDER BY seq')).rows.map((r) => [r.seq, r.id]),
      ).toEqual(source.auditSeqs);
      expect(await repository.loadPolicies()).toEqual({
        configHash: 'sha256:0123',
        policies: config.policies,
        updatedBy: 'token:admin',
        updatedAtMs: 1_765_000_000_123,
      });
      expect(await createPostgresRollbackStore(client).recall('kubernetes', 'rec-2')).toEqual({
        actuator: 'kubernetes',
        recommendationId: 'rec-2',
        actionId: 'act-2',
        object: '/apis/apps/v1/namespaces/llm/deployments/llama-8b/scale',
        value: { replicas: 2 },
        recordedAtMs: 1_765_000_000_456,
      });
      for (const table of ALERT_TABLES) {
        const columns = Object.keys(source.stateRows[table]![0]!);
        const copied = (await client.query(`SELECT * FROM ${table}`)).rows;
        expect(normalizeState(copied, columns), table).toEqual(
          normalizeState(source.stateRows[table]!, columns),
        );
      }
    });
  });

  it('gives the signals the embedded store gave: snapshot by pool, traces', async () => {
    await withClickHouse(async (store) => {
      const rollup = createClickHouseRollup(store.rollupIo, config);
      const loop = startClickHouseRollupLoop(rollup, { intervalMs: 60_000 });
      try {
        const clustered = createSignals({ engine: 'clickhouse', reader: store.reader, rollup: loop }, config);
        const snapshot = await clustered.snapshot(SNAPSHOT);
        expect(source.snapshot!.groups.length).toBeGreaterThanOrEqual(3);
        expect(source.snapshot!.groups.every((g) => g.requests > 0)).toBe(true);
        expectClose(snapshot, source.snapshot, 'snapshot');
        expectClose(await clustered.traces({ limit: 50 }), source.traces, 'traces');
      } finally {
        await loop.stop();
        await rollup.close();
      }
    });
  });

  it('run again, duplicates nothing: the same rows, also without FINAL, the same audit numbers', async () => {
    const run = await migrate(['--config', configFile, '--from', dataDir]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('held rows before this run: merging the partitions written twice');
    const expected = Object.fromEntries(CLICKHOUSE_TABLES.map((t) => [t, source.counts[t]]));
    await withClickHouse(async (store) => {
      expect(await clickHouseCounts(store, true)).toEqual(expected);
      // Plain SQL (no FINAL), as the SQL console reads: the partitions written twice were merged.
      expect(await clickHouseCounts(store, false)).toEqual(expected);
    });
    expect(await postgresCounts()).toEqual(
      Object.fromEntries(POSTGRES_TABLES.map((t) => [t, source.counts[t]])),
    );
    await withPostgres(async (client) => {
      expect(
        (await client.query('SELECT seq, id FROM control_audit ORDER BY seq')).rows.map((r) => [r.seq, r.id]),
      ).toEqual(source.auditSeqs);
      // A node appending after the migration takes the next number.
      await createPostgresRepository(client).appendAudit([auditEntry('aud-4', 'rec-2', 4)]);
      expect((await client.query("SELECT seq FROM control_audit WHERE id = 'aud-4'")).rows[0].seq).toBe(
        String(source.auditSeqs.length + 1),
      );
    });
    expect(existsSync(join(dataDir, 'governor.duckdb'))).toBe(true);
  });
});
