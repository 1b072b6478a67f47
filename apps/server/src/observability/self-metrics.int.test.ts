import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GovernorConfig } from '@governor/conventions';
import { encodeTraceRequestProtobuf } from '@governor/otlp';
import { syntheticTraceRequest } from '@governor/otlp/fixtures';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePrometheusText } from '../../test/parse-prometheus-text.ts';
import { findFreePort } from '../bench/spawn-governor-process.ts';
import { type RunningGovernor, startGovernor } from '../start-governor.ts';

const ADMIN = 'metrics-admin-token-000001';
const READ = 'metrics-read-token-0000001';
const INGEST = 'metrics-ingest-token-00001';
/** 2025-05-01T00:00:00Z */
const T0 = 1_746_057_600_000_000_000n;
const HOUR_NS = 3_600_000_000_000n;

let dir: string;
let governor: RunningGovernor;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'governor-metrics-'));
  governor = await startGovernor({
    config: GovernorConfig.parse({
      server: { http_port: 0, grpc_port: 0, data_dir: join(dir, 'data') },
      retention: { spans_ttl_hours: 1, run_interval_s: 86_400 },
    }),
    env: { GOVERNOR_ADMIN_TOKEN: ADMIN, GOVERNOR_TOKENS: `prom:read:${READ},otel:ingest:${INGEST}` },
  });
  for (const [at, seed] of [
    [T0, 1],
    [T0 + 3n * HOUR_NS, 2],
  ] as const) {
    const response = await fetch(`${governor.httpUrl}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf', authorization: `Bearer ${INGEST}` },
      body: Buffer.from(encodeTraceRequestProtobuf(syntheticTraceRequest({ spans: 80, seed, startNs: at }))),
    });
    expect(response.status).toBe(200);
  }
  const live = async () => {
    const r = await fetch(`${governor.httpUrl}/api/sql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${READ}`, 'content-type': 'application/json' },
      body: JSON.stringify({ sql: 'SELECT count(*) FROM span_store' }),
    });
    return ((await r.json()) as { rows: number[][] }).rows[0]![0];
  };
  // Acknowledged spans may sit in the ingest stage while a checkpoint runs.
  for (const deadline = Date.now() + 30_000; (await live()) !== 160; ) {
    if (Date.now() > deadline) throw new Error('the 160 ingested spans never reached span_store');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const run = await fetch(`${governor.httpUrl}/api/retention/run`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  expect(run.status).toBe(200);
});

afterAll(async () => {
  await governor?.close();
  rmSync(dir, { recursive: true, force: true });
});

const scrape = async (token?: string) => {
  const response = await fetch(
    `${governor.httpUrl}/metrics`,
    token ? { headers: { authorization: `Bearer ${token}` } } : {},
  );
  return { status: response.status, text: await response.text() };
};

function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('self-observability on /metrics', () => {
  it('needs the read scope', async () => {
    expect((await scrape()).status).toBe(401);
    expect((await scrape(INGEST)).status).toBe(403);
  });

  it('passes promtool check metrics, the whole scrape', async () => {
    const { status, text } = await scrape(READ);
    expect(status).toBe(200);
    // Prometheus' own parser and linter over everything /metrics serves (every provider): names,
    // types, suffixes, histogram shape. It prints nothing and exits 0 only when all of it is clean.
    const promtool = spawnSync('/usr/bin/promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(promtool.error).toBeUndefined();
    expect(`${promtool.stdout}${promtool.stderr}`).toBe('');
    expect(promtool.status).toBe(0);
  });

  it('writes request latency as a histogram: cumulative buckets up to +Inf, _sum and _count', async () => {
    const families = parsePrometheusText((await scrape(READ)).text);
    const histogram = families.get('governor_http_request_duration_seconds');
    expect(histogram?.type).toBe('histogram');
    const route = (s: { labels: Record<string, string> }) =>
      s.labels.method === 'POST' && s.labels.route === '/v1/traces';
    const samples = histogram!.samples.filter(route);
    const buckets = samples.filter((s) => s.name.endsWith('_bucket'));
    const bounds = buckets.map((b) => b.labels.le);
    expect(bounds.at(-1)).toBe('+Inf');
    expect(bounds.slice(0, -1).map(Number)).toEqual(
      [...bounds.slice(0, -1).map(Number)].sort((a, b) => a - b),
    );
    const counts = buckets.map((b) => b.value);
    for (let i = 1; i < counts.length; i++) expect(counts[i]).toBeGreaterThanOrEqual(counts[i - 1]!);
    const count = samples.find((s) => s.name.endsWith('_count'))?.value;
    expect(count).toBe(2);
    expect(counts.at(-1)).toBe(count);
    expect(samples.find((s) => s.name.endsWith('_sum'))?.value).toBeGreaterThan(0);
    // No stray family of the suffixed names (what a counter-typed bucket would look like).
    expect(families.has('governor_http_request_duration_seconds_bucket')).toBe(false);
  });

  it('reports storage, retention, HTTP and process figures', async () => {
    const { status, text } = await scrape(READ);
    expect(status).toBe(200);

    expect(value(text, 'governor_table_rows{table="span_store"}')).toBe(80);
    expect(value(text, 'governor_export_files{table="spans"}')).toBe(1);
    expect(value(text, 'governor_export_bytes{table="spans"}')).toBeGreaterThan(0);
    expect(value(text, 'governor_retention_rows_exported_total{table="spans"}')).toBe(80);
    expect(value(text, 'governor_retention_runs_total{table="spans",outcome="failed"}')).toBe(0);
    expect(value(text, 'governor_database_file_bytes')).toBeGreaterThan(0);
    expect(value(text, 'governor_http_requests_total{method="POST",route="/v1/traces",status="200"}')).toBe(
      2,
    );
    expect(
      value(text, 'governor_http_request_duration_seconds_count{method="POST",route="/v1/traces"}'),
    ).toBe(2);
    expect(
      value(
        text,
        'governor_http_request_duration_seconds_bucket{method="POST",route="/v1/traces",le="+Inf"}',
      ),
    ).toBe(2);
    expect(value(text, 'governor_control_ticks_total')).toBeGreaterThanOrEqual(0);
    expect(value(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(value(text, 'governor_metrics_provider_up{provider="governor"}')).toBe(1);
    // The DuckDB settings in effect: the defaults of server.duckdb_memory_limit (1GB) and threads.
    expect(value(text, 'governor_duckdb_memory_limit_bytes')).toBe(1_000_000_000);
    expect(value(text, 'governor_duckdb_threads')).toBe(2);
  });

  it('reports how long the event loop was held since the previous scrape', async () => {
    await scrape(READ);
    // Governor runs in this process: hold its event loop as a long synchronous commit would.
    const until = performance.now() + 300;
    while (performance.now() < until);
    const held = await scrape(READ);
    const max = value(held.text, 'nodejs_eventloop_lag_max_seconds')!;
    expect(max).toBeGreaterThanOrEqual(0.28);
    expect(value(held.text, 'nodejs_eventloop_lag_p50_seconds')).toBeLessThan(max);
    // The next scrape covers only the time since this one.
    const after = await scrape(READ);
    expect(value(after.text, 'nodejs_eventloop_lag_max_seconds')).toBeLessThan(max);
  });

  it('is scraped by a real Prometheus with a bearer token from a file', async () => {
    const port = await findFreePort();
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, `${READ}\n`);
    const configFile = join(dir, 'prometheus.yml');
    const target = new URL(governor.httpUrl).host;
    writeFileSync(
      configFile,
      `global: {scrape_interval: 1s}\nscrape_configs:\n  - job_name: governor\n    metrics_path: /metrics\n    authorization: {type: Bearer, credentials_file: ${tokenFile}}\n    static_configs: [{targets: ['${target}']}]\n`,
    );
    const prometheus: ChildProcess = spawn(
      '/usr/bin/prometheus',
      [
        `--config.file=${configFile}`,
        `--storage.tsdb.path=${join(dir, 'tsdb')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: 'ignore' },
    );
    try {
      const query = async () => {
        try {
          const r = await fetch(
            `http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent('governor_table_rows{table="span_store"}')}`,
          );
          const body = (await r.json()) as { data?: { result?: { value: [number, string] }[] } };
          return body.data?.result?.[0]?.value[1] ?? null;
        } catch {
          return null;
        }
      };
      await expect.poll(query, { timeout: 60_000, interval: 250 }).toBe('80');
    } finally {
      prometheus.kill('SIGTERM');
      await new Promise((resolve) => prometheus.once('exit', resolve));
    }
  });
});
