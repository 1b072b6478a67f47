import { randomBytes } from 'node:crypto';
import { totalmem } from 'node:os';
import { parseByteSize } from '@governor/conventions';
import { checkBindAddress } from '../auth/check-bind-address.ts';
import { isScope } from '../auth/scopes.ts';
import { createTokenRegistry, sha256Hex } from '../auth/token-registry.ts';
import { checkConfig } from '../load-config.ts';
import { renderDefaultsYaml } from './config-reference.ts';
import { type ParsedArgs, flagString } from './parse-args.ts';

export const CONFIG_USAGE = `usage:
  governor config check FILE            validate FILE (and GOVERNOR_* overrides); prints OK or one error per line, exit 1 on errors
  governor config token [--name N] [--scopes read+operate]
                                        make a random API token and the auth.tokens entry for it
  governor config hash-token [TOKEN]    print the sha256 of TOKEN (or of stdin) for token_sha256
  governor config print-defaults        print a complete governor.yaml: every key at its default, meanings as
                                        comments (docs/config.md is the same reference as a page)`;

export async function runConfigCommand(
  args: ParsedArgs,
  out: (text: string) => void = (t) => process.stdout.write(t),
  err: (text: string) => void = (t) => process.stderr.write(t),
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const [sub, ...rest] = args.positional;
  switch (sub) {
    case 'check':
      return check(rest[0], out, err, env);
    case 'token':
      return makeToken(args, out, err);
    case 'hash-token':
      return hashToken(rest[0], out, err);
    case 'print-defaults':
      out(renderDefaultsYaml());
      return 0;
    default:
      err(`${sub ? `unknown config command "${sub}"\n` : ''}${CONFIG_USAGE}\n`);
      return 2;
  }
}

function check(
  file: string | undefined,
  out: (text: string) => void,
  err: (text: string) => void,
  env: NodeJS.ProcessEnv,
): number {
  if (!file) {
    err(`governor config check needs a file\n${CONFIG_USAGE}\n`);
    return 2;
  }
  const result = checkConfig(file, env);
  if (!result.ok) {
    for (const line of result.errors) err(`${line}\n`);
    err(`${result.errors.length} error${result.errors.length === 1 ? '' : 's'} in ${file}\n`);
    return 1;
  }
  // What start would refuse but depends on the environment it runs in: warnings, not errors.
  const warnings: string[] = [];
  let authEnabled = result.config.auth.tokens.length > 0;
  try {
    authEnabled = createTokenRegistry(result.config.auth, env).enabled;
  } catch (error) {
    warnings.push(`${(error as Error).message} (Governor refuses to start like this)`);
  }
  try {
    checkBindAddress(result.config.server.host, authEnabled, result.config.server.insecure);
  } catch (error) {
    warnings.push((error as Error).message);
  }
  const memoryLimitBytes = parseByteSize(result.config.server.duckdb_memory_limit);
  if (memoryLimitBytes > totalmem()) {
    warnings.push(
      `server.duckdb_memory_limit ${result.config.server.duckdb_memory_limit} is more than this machine's ${(totalmem() / 2 ** 30).toFixed(1)} GiB of memory; DuckDB would be killed before it spills to disk`,
    );
  }
  for (const w of warnings) err(`warning: ${w}\n`);
  const c = result.config;
  out(
    `OK: ${file} (listen ${c.server.host}:${c.server.http_port}/${c.server.grpc_port}, ${c.auth.tokens.length} configured token${c.auth.tokens.length === 1 ? '' : 's'}, ` +
      `${c.pools.length} pool${c.pools.length === 1 ? '' : 's'}, spans TTL ${c.retention.spans_ttl_hours > 0 ? `${c.retention.spans_ttl_hours} h` : 'off'})\n`,
  );
  return 0;
}

function makeToken(args: ParsedArgs, out: (text: string) => void, err: (text: string) => void): number {
  const name = flagString(args, 'name') ?? 'my-client';
  const scopes = (flagString(args, 'scopes') ?? 'read').split('+');
  const bad = scopes.filter((s) => !isScope(s));
  if (bad.length > 0) {
    err(`unknown scope ${bad.join(', ')}; use ingest, read, operate or admin, joined by +\n`);
    return 2;
  }
  const token = newToken();
  out(
    `token (give it to the client; Governor keeps only its hash):\n  ${token}\n\n` +
      `config entry:\nauth:\n  tokens:\n    - name: ${name}\n      token_sha256: ${sha256Hex(token)}\n      scopes: [${scopes.join(', ')}]\n\n` +
      `or in the environment:\n  GOVERNOR_TOKENS='${name}:${scopes.join('+')}:${token}'\n`,
  );
  return 0;
}

async function hashToken(
  token: string | undefined,
  out: (text: string) => void,
  err: (text: string) => void,
): Promise<number> {
  let value = token;
  if (value === undefined) {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    value = Buffer.concat(chunks).toString('utf8').trim();
  }
  if (!value) {
    err('no token given: pass it as an argument or on stdin\n');
    return 2;
  }
  out(`${sha256Hex(value)}\n`);
  return 0;
}

/**
 * 32 random bytes as base64url, drawn again when it would start with '-': a command line reads such
 * a token as an option (`governor config hash-token -R…` failed: unknown option -R).
 */
function newToken(): string {
  for (;;) {
    const token = randomBytes(32).toString('base64url');
    if (!token.startsWith('-')) return token;
  }
}
