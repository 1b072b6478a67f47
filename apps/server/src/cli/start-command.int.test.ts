import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CLI_PATH,
  GOVERNOR_NODE_ARGS,
  REPO_ROOT,
  spawnGovernorProcess,
} from '../bench/spawn-governor-process.ts';

// `governor start` as an operator runs it: environment in, exit code and stderr out.

const dir = mkdtempSync(join(tmpdir(), 'governor-start-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `governor start` with only `env` set among GOVERNOR_* variables, until it exits. */
function start(
  env: Record<string, string>,
  dataDir: string,
): Promise<{ code: number | null; stderr: string }> {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !k.startsWith('GOVERNOR_')) base[k] = v;
  const child = spawn(
    process.execPath,
    [...GOVERNOR_NODE_ARGS, CLI_PATH, 'start', '--data-dir', dataDir, '--http-port', '0', '--grpc-port', '0'],
    { cwd: REPO_ROOT, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stderr })));
}

describe('governor start', () => {
  it('refuses an unknown GOVERNOR_LOG_LEVEL in one line, like any other config error', async () => {
    const dataDir = join(dir, 'loud');
    const loud = await start({ GOVERNOR_LOG_LEVEL: 'loud' }, dataDir);
    expect(loud.stderr).toBe(
      'GOVERNOR_LOG_LEVEL: expected one of trace, debug, info, warn, error, fatal, silent; got "loud"\n',
    );
    // The exit code of every configuration error (here a wrong override, for comparison).
    const badPort = await start({ GOVERNOR_HTTP_PORT: 'http' }, dataDir);
    expect(badPort.stderr).toBe('GOVERNOR_HTTP_PORT: expected a number, got "http"\n');
    expect(loud.code).toBe(badPort.code);
    expect(loud.code).toBe(1);
    // Refused before anything was created.
    expect(existsSync(dataDir)).toBe(false);
  });

  it('says in one line that a data dir which is a file cannot be used', async () => {
    const file = join(dir, 'not-a-folder');
    writeFileSync(file, 'x');
    const refused = await start({}, file);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^governor: data directory .*not-a-folder is a file, not a folder: [^\n]*\n$/,
    );
  });

  it('runs with the log level and DuckDB settings from the environment', async () => {
    const governor = await spawnGovernorProcess({
      dataDir: join(dir, 'env'),
      env: {
        GOVERNOR_LOG_LEVEL: 'DEBUG',
        GOVERNOR_DUCKDB_MEMORY_LIMIT: '512MB',
        GOVERNOR_DUCKDB_THREADS: '1',
      },
    });
    try {
      const metrics = await (await fetch(`${governor.url}/metrics`)).text();
      expect(metrics).toMatch(/^governor_duckdb_memory_limit_bytes 512000000$/m);
      expect(metrics).toMatch(/^governor_duckdb_threads 1$/m);
      // What DuckDB itself reports (MiB): the setting reached the instance.
      const sql = await fetch(`${governor.url}/api/sql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          sql: "SELECT current_setting('memory_limit') AS m, current_setting('threads') AS t",
        }),
      });
      expect(((await sql.json()) as { rows: unknown[][] }).rows).toEqual([['488.2 MiB', 1]]);
      // Debug level: successful requests are logged (pino level 20).
      await expect
        .poll(() => governor.output(), { timeout: 10_000 })
        .toMatch(/"level":20,[^\n]*"route":"\/metrics"[^\n]*"msg":"request done"/);
      // Started as `pnpm governor start` is: libuv's pool has a thread for every DuckDB connection.
      expect(governor.output()).not.toContain('UV_THREADPOOL_SIZE');
    } finally {
      governor.child.kill('SIGTERM');
      await governor.exited;
    }
  });
});
