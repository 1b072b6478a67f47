import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../auth/token-registry.ts';
import { ConfigError, ENV_OVERRIDES, loadConfig } from '../load-config.ts';
import { runConfigCommand } from './config-command.ts';
import { COMMAND_OPTIONS } from './command-options.ts';
import { parseArgs } from './parse-args.ts';

const dir = mkdtempSync(join(tmpdir(), 'governor-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

async function run(argv: string[], env: NodeJS.ProcessEnv = {}) {
  let out = '';
  let err = '';
  const code = await runConfigCommand(
    parseArgs(argv, COMMAND_OPTIONS.config),
    (t) => {
      out += t;
    },
    (t) => {
      err += t;
    },
    env,
  );
  return { code, out, err };
}

describe('governor config check', () => {
  it('prints OK and exits 0 for a valid file', async () => {
    const path = file('ok.yaml', 'server:\n  http_port: 9000\nretention:\n  spans_ttl_hours: 24\n');
    const r = await run(['check', path]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^OK: .*ok\.yaml \(listen 127\.0\.0\.1:9000\/4317.*spans TTL 24 h\)/);
    expect(r.err).toBe('');
  });

  it('reports each problem as file:line:col: path: message and exits 1', async () => {
    const path = file(
      'bad.yaml',
      [
        'server:',
        '  hots: 0.0.0.0',
        '  http_port: "4318"',
        'pools:',
        '  - name: a',
        '    gpus_per_replica: -1',
        'auth:',
        '  tokens:',
        '    - name: ci',
        '      token_sha256: abc',
        '      scopes: [ingest]',
        '',
      ].join('\n'),
    );
    const r = await run(['check', path]);
    expect(r.code).toBe(1);
    const lines = r.err.trim().split('\n');
    expect(r.err).toContain(
      `${path}:2:3: server.hots: unknown key; did you mean "host"? allowed here: host, http_port`,
    );
    expect(r.err).toContain(`${path}:3:3: server.http_port: Invalid input: expected number, received string`);
    expect(r.err).toContain(`${path}:6:5: pools.0.gpus_per_replica: Too small`);
    expect(r.err).toContain(`${path}:10:7: auth.tokens.0.token_sha256: expected 64 lowercase hex characters`);
    expect(lines.at(-1)).toBe(`4 errors in ${path}`);
  });

  it('names the YAML syntax error position', async () => {
    const path = file('broken.yaml', 'server:\n  host: [1\n');
    const r = await run(['check', path]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(new RegExp(`^${path.replaceAll('.', '\\.')}:\\d+:\\d+: not valid YAML`));
  });

  it('blames the environment variable when an override is wrong', async () => {
    const path = file('env.yaml', 'server: {}\n');
    const r = await run(['check', path], { GOVERNOR_HTTP_PORT: 'http' });
    expect(r.code).toBe(1);
    expect(r.err).toContain('GOVERNOR_HTTP_PORT: expected a number, got "http"');
    const negative = await run(['check', path], { GOVERNOR_HTTP_PORT: '-5' });
    expect(negative.err).toContain('GOVERNOR_HTTP_PORT (overrides server.http_port): Too small');
  });

  it('checks the DuckDB settings from the file and the environment, blaming the right one', async () => {
    const path = file('duckdb.yaml', 'server:\n  duckdb_memory_limit: lots\n');
    const r = await run(['check', path]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(
      `${path}:2:3: server.duckdb_memory_limit: expected a size with a unit (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), e.g. 1GB or 512MB; got "lots"`,
    );
    const fromEnv = await run(['check', file('empty.yaml', 'server: {}\n')], {
      GOVERNOR_DUCKDB_MEMORY_LIMIT: '64MB',
      GOVERNOR_DUCKDB_THREADS: 'two',
    });
    expect(fromEnv.code).toBe(1);
    expect(fromEnv.err).toContain('GOVERNOR_DUCKDB_THREADS: expected a number, got "two"');
    const tooSmall = await run(['check', file('empty.yaml', 'server: {}\n')], {
      GOVERNOR_DUCKDB_MEMORY_LIMIT: '64MB',
    });
    expect(tooSmall.err).toContain(
      'GOVERNOR_DUCKDB_MEMORY_LIMIT (overrides server.duckdb_memory_limit): must be at least 128MB',
    );
  });

  it('warns when the DuckDB memory limit is more than the machine has', async () => {
    const r = await run(['check', file('huge.yaml', 'server:\n  duckdb_memory_limit: 900TB\n')]);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(
      /^warning: server\.duckdb_memory_limit 900TB is more than this machine's [\d.]+ GiB/,
    );
    expect((await run(['check', file('small.yaml', 'server:\n  duckdb_memory_limit: 512MB\n')])).err).toBe(
      '',
    );
  });

  it('reports an unknown GOVERNOR_LOG_LEVEL with the allowed levels', async () => {
    const r = await run(['check', file('plain.yaml', 'server: {}\n')], { GOVERNOR_LOG_LEVEL: 'loud' });
    expect(r.code).toBe(1);
    expect(r.err).toBe(
      `GOVERNOR_LOG_LEVEL: expected one of trace, debug, info, warn, error, fatal, silent; got "loud"\n1 error in ${dir}/plain.yaml\n`,
    );
    expect(
      (await run(['check', file('plain.yaml', 'server: {}\n')], { GOVERNOR_LOG_LEVEL: 'WARN' })).code,
    ).toBe(0);
  });

  it('warns about what start would refuse in this environment, without failing', async () => {
    const path = file(
      'public.yaml',
      'server:\n  host: 0.0.0.0\nauth:\n  tokens:\n    - name: ci\n      token_env: CI_TOKEN\n      scopes: [ingest]\n',
    );
    const r = await run(['check', path]);
    expect(r.code).toBe(0);
    expect(r.err).toContain('token_env CI_TOKEN is not set');
    const withToken = await run(['check', path], { CI_TOKEN: 'a-long-enough-token-0001' });
    expect(withToken.err).toBe('');
    const open = await run(['check', file('open.yaml', 'server:\n  host: 0.0.0.0\n')]);
    expect(open.code).toBe(0);
    expect(open.err).toMatch(/^warning: GOV_ERR_AUTH_INSECURE_BIND: refusing to listen on 0\.0\.0\.0/);
  });
});

describe('governor config token / hash-token', () => {
  it('makes a token whose hash matches the printed entry', async () => {
    const r = await run(['token', '--name', 'grafana', '--scopes', 'read+operate']);
    expect(r.code).toBe(0);
    const token = /\n {2}(\S+)\n/.exec(r.out)?.[1] ?? '';
    expect(token.length).toBeGreaterThanOrEqual(43);
    expect(r.out).toContain(`token_sha256: ${sha256Hex(token)}`);
    expect(r.out).toContain('scopes: [read, operate]');
    expect((await run(['hash-token', token])).out.trim()).toBe(sha256Hex(token));
  });

  it('never makes a token a command line would read as an option', async () => {
    // One in 64 base64url tokens started with '-' (hash-token then failed: unknown option).
    for (let i = 0; i < 600; i++) {
      const token = /\n {2}(\S+)\n/.exec((await run(['token', '--name', 'ci'])).out)?.[1] ?? '-';
      expect(token.startsWith('-'), token).toBe(false);
    }
  });
});

describe('loadConfig', () => {
  it('has every GOVERNOR_* override in the table of docs/operations.md', () => {
    const doc = readFileSync(join(import.meta.dirname, '../../../../docs/operations.md'), 'utf8');
    const rows = doc.split('\n').filter((line) => line.startsWith('| `GOVERNOR_'));
    for (const [variable, path] of ENV_OVERRIDES) {
      const row = rows.find((line) => line.startsWith(`| \`${variable}\` `));
      expect(row, variable).toContain(`\`${path.join('.')}\``);
    }
  });

  it('applies documented environment overrides', () => {
    const config = loadConfig(undefined, {
      GOVERNOR_HOST: '0.0.0.0',
      GOVERNOR_SPANS_TTL_HOURS: '48',
      GOVERNOR_INSECURE: 'true',
      GOVERNOR_SQL_TIMEOUT_MS: '2500',
      GOVERNOR_DUCKDB_MEMORY_LIMIT: '2GiB',
      GOVERNOR_DUCKDB_THREADS: '4',
    });
    expect(config.server).toMatchObject({
      host: '0.0.0.0',
      insecure: true,
      sql_timeout_ms: 2500,
      duckdb_memory_limit: '2GiB',
      duckdb_threads: 4,
    });
    expect(config.retention.spans_ttl_hours).toBe(48);
  });

  it('throws a ConfigError listing every problem', () => {
    const path = file('two.yaml', 'server:\n  http_port: -1\n  grpc_port: x\n');
    expect(() => loadConfig(path, {})).toThrow(ConfigError);
    expect(() => loadConfig(path, {})).toThrow(
      /two\.yaml:2:3: server\.http_port[^\n]*\n[^\n]*two\.yaml:3:3: server\.grpc_port/,
    );
  });
});
