import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeMetricsRequestProtobuf, encodeTraceRequestProtobuf } from '@governor/otlp';
import { FLEET_CONFIG, H100_POOL, buildFleetScenario, mergeExports } from '@governor/signals/fixtures';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePrometheusText } from '../../test/parse-prometheus-text.ts';
import { type TestGovernor, startTestGovernor } from '../otlp/start-test-governor.ts';

// GET /metrics read three ways: by a strict reader of the text format, by promtool (Prometheus'
// own parser and linter) and by a real Prometheus that scrapes Governor and answers queries.

const PROMETHEUS = '/usr/bin/prometheus';
const PROMTOOL = '/usr/bin/promtool';

let t: TestGovernor;
let prometheus: ChildProcess | null = null;
let promDir: string | null = null;

beforeAll(async () => {
  t = await startTestGovernor({ ...FLEET_CONFIG, control: { enabled: false } });
  const scenario = buildFleetScenario();
  for (const [path, body] of [
    ['/v1/traces', encodeTraceRequestProtobuf(mergeExports(scenario.traces))],
    ['/v1/metrics', encodeMetricsRequestProtobuf(scenario.metrics[0]!)],
  ] as const) {
    const response = await fetch(`${t.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body: Buffer.from(body),
    });
    expect(response.status).toBe(200);
  }
  // What the control loop will add: another family through the registry, without editing the plugin.
  t.governor.metrics.register(
    'test-desired-replicas',
    () =>
      '# HELP governor_desired_replicas Replicas the control loop wants.\n# TYPE governor_desired_replicas gauge\ngovernor_desired_replicas{pool="llama70b-h100"} 3\n',
  );
});

afterAll(async () => {
  if (prometheus && prometheus.exitCode === null) {
    const exited = new Promise((resolve) => prometheus!.once('exit', resolve));
    prometheus.kill('SIGTERM');
    await exited;
  }
  if (promDir) rmSync(promDir, { recursive: true, force: true });
  await t?.close();
});

async function scrape(): Promise<{ contentType: string | null; text: string }> {
  const response = await fetch(`${t.url}/metrics`);
  expect(response.status).toBe(200);
  return { contentType: response.headers.get('content-type'), text: await response.text() };
}

describe('GET /metrics', () => {
  it('serves the signals and Governor’s own counters in the strict text format', async () => {
    const { contentType, text } = await scrape();
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const families = parsePrometheusText(text);
    const value = (name: string, labels: Record<string, string>) =>
      families
        .get(name)
        ?.samples.find(
          (s) =>
            Object.entries(labels).every(([k, v]) => s.labels[k] === v) &&
            Object.keys(s.labels).length === Object.keys(labels).length,
        )?.value;
    expect(families.get('governor_ttft_seconds')?.type).toBe('summary');
    expect(value('governor_ttft_seconds', { pool: H100_POOL, quantile: '0.95' })).toBeGreaterThan(0);
    expect(value('governor_ttft_seconds', { quantile: '0.5' })).toBeGreaterThan(0);
    expect(value('governor_success_per_dollar', { pool: H100_POOL })).toBeGreaterThan(0);
    expect(value('governor_cost_usd', {})).toBeGreaterThan(0);
    expect(value('governor_hop_share_of_e2e_ratio', { pool: H100_POOL, hop: 'decode' })).toBeGreaterThan(0.5);
    expect(families.get('governor_ingest_spans_accepted_total')?.type).toBe('counter');
    expect(value('governor_ingest_spans_accepted_total', {})).toBe(buildFleetScenario().traces.length * 6);
    expect(value('governor_desired_replicas', { pool: H100_POOL })).toBe(3);
    expect(value('governor_metrics_provider_up', { provider: 'signals' })).toBe(1);
    // No KV-cache data and no peak throughput: the utilization series is absent, not 0.
    expect(families.get('governor_utilization_ratio')).toBeUndefined();
  });

  it('counts every group commit in a cumulative histogram of their durations', async () => {
    const families = parsePrometheusText((await scrape()).text);
    const flushes = families.get('governor_writer_flushes_total')?.samples[0]?.value ?? 0;
    const histogram = families.get('governor_writer_flush_seconds');
    expect(histogram?.type).toBe('histogram');
    const buckets = histogram!.samples.filter((s) => s.name === 'governor_writer_flush_seconds_bucket');
    const counts = buckets.map((s) => s.value);
    // Both exports above were committed: at least one group commit, each counted once.
    expect(flushes).toBeGreaterThan(0);
    expect(counts.at(-1)).toBe(flushes);
    expect(buckets.at(-1)?.labels.le).toBe('+Inf');
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    const sum = histogram!.samples.find((s) => s.name === 'governor_writer_flush_seconds_sum')?.value;
    expect(sum).toBeGreaterThan(0);
    expect(histogram!.samples.find((s) => s.name === 'governor_writer_flush_seconds_count')?.value).toBe(
      flushes,
    );
    expect(families.get('governor_writer_checkpoint_seconds')?.type).toBe('histogram');
  });

  it('passes promtool check metrics (Prometheus’ parser and naming lint)', async () => {
    // The families of this plugin's providers (signals, ingest); other providers are checked by their owners.
    const text = familiesMatching((await scrape()).text, OWN_FAMILIES);
    expect(text).toContain('governor_success_per_dollar');
    expect(text).toContain('governor_writer_queued_rows');
    const result = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = execFile(PROMTOOL, ['check', 'metrics'], (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
      );
      child.stdin!.end(text);
    });
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  });

  it('is scraped by a real Prometheus, whose HTTP API then returns the samples', async () => {
    promDir = mkdtempSync(join(tmpdir(), 'governor-prometheus-'));
    const port = await freePort();
    const target = new URL(t.url).host;
    writeFileSync(
      join(promDir, 'prometheus.yml'),
      `global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: governor\n    scrape_interval: 1s\n    static_configs:\n      - targets: ['${target}']\n`,
    );
    prometheus = spawn(
      PROMETHEUS,
      [
        `--config.file=${join(promDir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(promDir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: 'ignore' },
    );
    const query = async (promql: string) => {
      const response = await fetch(
        `http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(promql)}`,
      );
      const body = (await response.json()) as {
        data: { result: { metric: Record<string, string>; value: [number, string] }[] };
      };
      return body.data.result;
    };
    const result = await eventually(async () => {
      const r = await query(`governor_success_per_dollar{pool="${H100_POOL}"}`);
      if (r.length === 0) throw new Error('not scraped yet');
      return r;
    });
    expect(result[0]!.metric.job).toBe('governor');
    expect(Number(result[0]!.value[1])).toBeGreaterThan(0);
    const ttft = await query(`governor_ttft_seconds{pool="${H100_POOL}",quantile="0.95"}`);
    expect(Number(ttft[0]!.value[1])).toBeGreaterThan(0);
    const up = await query('up{job="governor"}');
    expect(up[0]!.value[1]).toBe('1');
  });
});

const OWN_FAMILIES =
  /^governor_(signals_|requests$|ttft_|server_ttft_|e2e_|task_e2e_|queue_|hop_|error_ratio|preemption_ratio|retry_ratio|cache_hit_ratio|goodput_ratio|utilization_ratio|memory_utilization|compute_utilization|success_per_dollar|cost_|tasks$|successful_tasks|good_tasks|replicas$|generated_tokens|ingest_|writer_|metrics_provider_up)/;

/** The blocks (HELP, TYPE and samples) of the families whose name matches. */
function familiesMatching(text: string, pattern: RegExp): string {
  const blocks = text.split(/(?=^# HELP )/m);
  return blocks.filter((b) => pattern.test(/^# HELP (\S+)/.exec(b)?.[1] ?? '')).join('');
}

/** Retries `fn` until it resolves (the condition holds), for at most `timeoutMs`. */
async function eventually<T>(fn: () => Promise<T>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
