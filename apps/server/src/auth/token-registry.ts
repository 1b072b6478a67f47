import { createHash, timingSafeEqual } from 'node:crypto';
import type { AuthConfig } from '@governor/conventions';
import { ConfigError } from '../load-config.ts';
import { type Scope, isScope } from './scopes.ts';

// API tokens from the config file (`auth.tokens`: token_sha256 or token_env) and from the
// environment (GOVERNOR_ADMIN_TOKEN, GOVERNOR_TOKENS). Only SHA-256 digests are kept in memory;
// a presented token is hashed and compared with every digest in constant time.

export const MIN_TOKEN_LENGTH = 16;

export interface RegisteredToken {
  name: string;
  scopes: readonly Scope[];
  /** Where the token came from, for logs: `config`, `GOVERNOR_ADMIN_TOKEN`, `GOVERNOR_TOKENS`. */
  source: string;
}

export interface TokenRegistry {
  /** False when no token is configured: auth is off (allowed on a loopback bind only). */
  readonly enabled: boolean;
  readonly tokens: readonly RegisteredToken[];
  /** The token's entry, or null when the presented token matches none. */
  authenticate(presented: string): RegisteredToken | null;
}

interface Entry extends RegisteredToken {
  digest: Buffer;
}

export function sha256Hex(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * Resolves every configured token. Throws ConfigError naming the token (never its value) when a
 * token_env variable is unset, a token is too short, or two entries share one token.
 */
export function createTokenRegistry(auth: AuthConfig, env: NodeJS.ProcessEnv): TokenRegistry {
  const entries: Entry[] = [];
  auth.tokens.forEach((token, i) => {
    const where = `auth.tokens.${i} ("${token.name}")`;
    let digest: string;
    if (token.token_sha256) digest = token.token_sha256;
    else {
      const variable = token.token_env!;
      const value = env[variable];
      if (value === undefined || value === '') {
        throw new ConfigError(
          `${where}: token_env ${variable} is not set; export ${variable} with the token, or use token_sha256`,
        );
      }
      assertLongEnough(value, `${where}: the token in ${variable}`);
      digest = sha256Hex(value);
    }
    entries.push({
      name: token.name,
      scopes: token.scopes,
      source: 'config',
      digest: Buffer.from(digest, 'hex'),
    });
  });

  const admin = env.GOVERNOR_ADMIN_TOKEN;
  if (admin) {
    assertLongEnough(admin, 'GOVERNOR_ADMIN_TOKEN');
    entries.push({
      name: 'admin',
      scopes: ['admin'],
      source: 'GOVERNOR_ADMIN_TOKEN',
      digest: digestOf(admin),
    });
  }
  if (env.GOVERNOR_TOKENS) entries.push(...parseTokensEnv(env.GOVERNOR_TOKENS));

  const seen = new Map<string, string>();
  for (const e of entries) {
    const key = e.digest.toString('hex');
    const other = seen.get(key);
    if (other !== undefined) {
      throw new ConfigError(
        `tokens "${other}" and "${e.name}" are the same token; give each client its own token so it can be revoked alone`,
      );
    }
    seen.set(key, e.name);
  }

  return {
    enabled: entries.length > 0,
    tokens: entries.map(({ name, scopes, source }) => ({ name, scopes, source })),
    authenticate(presented) {
      const digest = digestOf(presented);
      let match: Entry | null = null;
      // No early exit: every comparison runs, so timing does not tell how many tokens exist.
      for (const e of entries) {
        if (timingSafeEqual(digest, e.digest) && match === null) match = e;
      }
      return match ? { name: match.name, scopes: match.scopes, source: match.source } : null;
    },
  };
}

function digestOf(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

function assertLongEnough(token: string, what: string): void {
  if (token.length < MIN_TOKEN_LENGTH) {
    throw new ConfigError(
      `${what} is ${token.length} characters long; use at least ${MIN_TOKEN_LENGTH} (\`pnpm governor config token\` makes one)`,
    );
  }
}

/**
 * GOVERNOR_TOKENS: entries separated by commas or newlines, each `name:scope[+scope…]:token`,
 * e.g. `collector:ingest:3f9c…,grafana:read:a81b…`. The token is everything after the second colon.
 */
export function parseTokensEnv(value: string): Entry[] {
  const out: Entry[] = [];
  const items = value
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
  items.forEach((item, i) => {
    const first = item.indexOf(':');
    const second = first === -1 ? -1 : item.indexOf(':', first + 1);
    if (first <= 0 || second === -1 || second === item.length - 1) {
      throw new ConfigError(
        `GOVERNOR_TOKENS entry ${i + 1}: expected name:scope[+scope]:token (e.g. collector:ingest:<token>)`,
      );
    }
    const name = item.slice(0, first);
    const scopeText = item.slice(first + 1, second);
    const token = item.slice(second + 1);
    const scopes = scopeText.split('+').map((s) => s.trim());
    const bad = scopes.filter((s) => !isScope(s));
    if (bad.length > 0 || scopes.length === 0) {
      throw new ConfigError(
        `GOVERNOR_TOKENS entry ${i + 1} ("${name}"): unknown scope ${bad.map((s) => `"${s}"`).join(', ')}; expected ingest, read, operate or admin joined by +`,
      );
    }
    assertLongEnough(token, `GOVERNOR_TOKENS entry ${i + 1} ("${name}")`);
    out.push({ name, scopes: scopes as Scope[], source: 'GOVERNOR_TOKENS', digest: digestOf(token) });
  });
  return out;
}
