import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GovernorConfig } from '@governor/conventions';
import { encodeTraceRequestProtobuf } from '@governor/otlp';
import { syntheticTraceRequest } from '@governor/otlp/fixtures';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMAND_OPTIONS } from '../cli/command-options.ts';
import { parseArgs } from '../cli/parse-args.ts';
import { runRetentionCommand } from '../cli/retention-command.ts';
import { type RunningGovernor, startGovernor } from '../start-governor.ts';

const ADMIN = 'retention-admin-token-0001';
const READ = 'retention-read-token-00001';
const HOUR_NS = 3_600_000_000_000n;
/** 2025-03-01T00:00:00Z */
const T0 = 1_740_787_200_000_000_000n;

let dir: string;
let governor: RunningGovernor;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'governor-retention-api-'));
  governor = await startGovernor({
    config: GovernorConfig.parse({
      server: { http_port: 0, grpc_port: 0, data_dir: dir },
      // A long interval: the runs under test are the ones asked for.
      retention: { spans_ttl_hours: 2, rollups_ttl_hours: 3, run_interval_s: 86_400 },
    }),
    env: { GOVERNOR_ADMIN_TOKEN: ADMIN, GOVERNOR_TOKENS: `viewer:read:${READ}` },
  });
});

afterAll(async () => {
  await governor?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function api(method: string, path: string, token: string, body?: unknown) {
  const response = await fetch(`${governor.httpUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function ingest(startNs: bigint, spans: number, seed: number) {
  const body = encodeTraceRequestProtobuf(
    syntheticTraceRequest({ spans, seed, startNs, idPrefix: seed.toString(16).padStart(8, '0') }),
  );
  const response = await fetch(`${governor.httpUrl}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-protobuf', authorization: `Bearer ${ADMIN}` },
    body: Buffer.from(body),
  });
  expect(response.status).toBe(200);
}

const scalar = async (sql: string) =>
  Number(((await api('POST', '/api/sql', READ, { sql })).body.rows as number[][])[0]![0]);
const countSpans = () => scalar('SELECT count(*) FROM spans');

describe('retention through the API and the CLI', () => {
  it('runs on POST /api/retention/run (admin only) and keeps history visible in `spans`', async () => {
    await ingest(T0, 400, 1);
    await ingest(T0 + 5n * HOUR_NS, 100, 2);
    const total = 500;
    // Acknowledged spans may wait in the ingest stage during a checkpoint; wait until they are in.
    await expect.poll(countSpans, { timeout: 30_000 }).toBe(total);
    // …and until the rollup refresh has summarized every trace into a request.
    const traces = await scalar('SELECT count(DISTINCT trace_id) FROM spans');
    await expect
      .poll(() => scalar('SELECT count(DISTINCT trace_id) FROM requests'), { timeout: 30_000 })
      .toBe(traces);
    const requestsBefore = await scalar('SELECT count(*) FROM requests');
    const tasksBefore = await scalar('SELECT count(*) FROM tasks');

    expect((await api('POST', '/api/retention/run', READ)).status).toBe(403);
    const run = await api('POST', '/api/retention/run', ADMIN);
    expect(run.status).toBe(200);
    const spans = (run.body.targets as { target: string; rowsExported: number; files: string[] }[])[0]!;
    expect(spans).toMatchObject({ target: 'spans', rowsExported: 400 });
    expect(spans.files[0]).toMatch(/^spans\/date=2025-03-01\/hour=00\//);
    expect(await countSpans()).toBe(total);
    // The rollups of the first hour left the table for Parquet and still read back through the views.
    const rollups = (run.body.targets as { target: string; rowsExported: number }[]).find(
      (t) => t.target === 'request_facts',
    )!;
    expect(rollups.rowsExported).toBeGreaterThan(0);
    expect(await scalar('SELECT count(*) FROM request_facts')).toBe(requestsBefore - rollups.rowsExported);
    expect(await scalar('SELECT count(*) FROM requests')).toBe(requestsBefore);
    expect(await scalar('SELECT count(*) FROM tasks')).toBe(tasksBefore);

    const storage = await api('GET', '/api/storage', READ);
    expect(storage.status).toBe(200);
    expect(storage.body.retention).toMatchObject({ enabled: true, ttlHours: { spans: 2, metric_points: 2 } });
    expect(storage.body.exports).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ target: 'spans', files: 1, oldestPartition: '2025-03-01T00' }),
      ]),
    );
    expect(storage.body.tables).toEqual(
      expect.arrayContaining([expect.objectContaining({ table: 'span_store', rows: 100 })]),
    );
  });

  it('`governor retention run --url` asks the running server', async () => {
    await ingest(T0 + HOUR_NS, 40, 3); // late spans for an hour that is already past the cutoff
    const previous = process.env.GOVERNOR_TOKEN;
    process.env.GOVERNOR_TOKEN = ADMIN;
    try {
      const code = await runRetentionCommand(
        parseArgs(['run', '--url', governor.httpUrl], COMMAND_OPTIONS.retention),
      );
      expect(code).toBe(0);
    } finally {
      if (previous === undefined) delete process.env.GOVERNOR_TOKEN;
      else process.env.GOVERNOR_TOKEN = previous;
    }
    const runs = await api('POST', '/api/sql', ADMIN, {
      sql: "SELECT sum(rows_exported) FROM retention_runs WHERE target = 'spans' AND state = 'published'",
    });
    expect(runs.body.rows).toEqual([[440]]);
    expect(await countSpans()).toBe(540);
  });
});
