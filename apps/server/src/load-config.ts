import { readFileSync } from 'node:fs';
import { type ConfigIssue, type GovernorConfig, parseGovernorConfig } from '@governor/conventions';
import { LineCounter, isMap, isSeq, parseDocument } from 'yaml';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Reads the YAML config (or defaults without a file), applies GOVERNOR_* environment overrides
 * and validates it. Each error is one line, `file:line:col: path: what was expected`.
 */
export function loadConfig(file: string | undefined, env: NodeJS.ProcessEnv = process.env): GovernorConfig {
  const result = checkConfig(file, env);
  if (!result.ok) throw new ConfigError(result.errors.join('\n'));
  return result.config;
}

/** Like loadConfig, but returns every problem as a line instead of throwing (for `governor config check`). */
export function checkConfig(
  file: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): { ok: true; config: GovernorConfig } | { ok: false; errors: string[] } {
  let raw: unknown = {};
  let locate: (segments: readonly (string | number)[]) => string = () => '';
  const where = file ?? '(defaults and environment)';
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      return { ok: false, errors: [`cannot read config file ${file}: ${(error as Error).message}`] };
    }
    const lineCounter = new LineCounter();
    const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
    if (doc.errors.length > 0) {
      return {
        ok: false,
        errors: doc.errors.map((e) => {
          const pos = lineCounter.linePos(e.pos[0]);
          return `${file}:${pos.line}:${pos.col}: not valid YAML: ${e.message.split('\n')[0]}`;
        }),
      };
    }
    raw = doc.toJS() ?? {};
    locate = (segments) => {
      const range = rangeOf(doc.contents, segments);
      if (!range) return '';
      const pos = lineCounter.linePos(range);
      return `:${pos.line}:${pos.col}`;
    };
  }
  const envErrors: string[] = [];
  try {
    readLogLevel(env);
  } catch (error) {
    envErrors.push((error as Error).message);
  }
  const overridden = new Map<string, string>();
  let withEnv: unknown;
  try {
    withEnv = applyEnvOverrides(raw, env, overridden);
  } catch (error) {
    return { ok: false, errors: [...envErrors, (error as Error).message] };
  }
  const result = parseGovernorConfig(withEnv);
  if (result.ok && envErrors.length === 0) return result;
  const issues = result.ok ? [] : result.issues;
  return {
    ok: false,
    errors: [...envErrors, ...issues.map((issue) => formatIssue(where, issue, locate, overridden))],
  };
}

/** Levels pino (Fastify's logger) knows; `silent` turns logging off. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * GOVERNOR_LOG_LEVEL (not a config key: it applies before the config is read), default `info`.
 * Throws a one-line ConfigError naming the variable and the levels when it is not one of them.
 */
export function readLogLevel(env: NodeJS.ProcessEnv = process.env): LogLevel {
  const value = env.GOVERNOR_LOG_LEVEL;
  if (value === undefined || value.trim() === '') return 'info';
  const level = LOG_LEVELS.find((l) => l === value.trim().toLowerCase());
  if (!level)
    throw new ConfigError(`GOVERNOR_LOG_LEVEL: expected one of ${LOG_LEVELS.join(', ')}; got "${value}"`);
  return level;
}

function formatIssue(
  where: string,
  issue: ConfigIssue,
  locate: (segments: readonly (string | number)[]) => string,
  overridden: ReadonlyMap<string, string>,
): string {
  const variable = overridden.get(issue.path);
  if (variable) return `${variable} (overrides ${issue.path}): ${issue.message}`;
  return `${where}${locate(issue.segments)}: ${issue.path}: ${issue.message}`;
}

/** Offset of the node at `segments` (for an unknown key, the key itself), else of its nearest parent. */
function rangeOf(root: unknown, segments: readonly (string | number)[]): number | null {
  let node = root as { range?: [number, number, number] } | null | undefined;
  let best = node?.range?.[0] ?? null;
  for (const segment of segments) {
    if (isMap(node)) {
      const pair = node.items.find(
        (p) => String((p.key as { value?: unknown })?.value ?? p.key) === String(segment),
      );
      if (!pair) break;
      best = (pair.key as { range?: [number, number, number] })?.range?.[0] ?? best;
      node = pair.value as typeof node;
    } else if (isSeq(node) && typeof segment === 'number') {
      node = node.items[segment] as typeof node;
      if (!node) break;
      best = node.range?.[0] ?? best;
    } else break;
  }
  return best;
}

type EnvType = 'number' | 'string' | 'boolean';

/** GOVERNOR_* variables that override one config key each (docs/operations.md lists them). */
export const ENV_OVERRIDES: readonly [variable: string, path: readonly string[], type: EnvType][] = [
  ['GOVERNOR_HOST', ['server', 'host'], 'string'],
  ['GOVERNOR_HTTP_PORT', ['server', 'http_port'], 'number'],
  ['GOVERNOR_GRPC_PORT', ['server', 'grpc_port'], 'number'],
  ['GOVERNOR_DATA_DIR', ['server', 'data_dir'], 'string'],
  ['GOVERNOR_MAX_BODY_BYTES', ['server', 'max_body_bytes'], 'number'],
  ['GOVERNOR_MAX_QUEUED_SPANS', ['server', 'max_queued_spans'], 'number'],
  ['GOVERNOR_CHECKPOINT_INTERVAL_S', ['server', 'checkpoint_interval_s'], 'number'],
  ['GOVERNOR_SQL_TIMEOUT_MS', ['server', 'sql_timeout_ms'], 'number'],
  ['GOVERNOR_INSECURE', ['server', 'insecure'], 'boolean'],
  ['GOVERNOR_DUCKDB_MEMORY_LIMIT', ['server', 'duckdb_memory_limit'], 'string'],
  ['GOVERNOR_DUCKDB_THREADS', ['server', 'duckdb_threads'], 'number'],
  ['GOVERNOR_SPANS_TTL_HOURS', ['retention', 'spans_ttl_hours'], 'number'],
  ['GOVERNOR_ROLLUPS_TTL_HOURS', ['retention', 'rollups_ttl_hours'], 'number'],
  ['GOVERNOR_RETENTION_INTERVAL_S', ['retention', 'run_interval_s'], 'number'],
];

function applyEnvOverrides(raw: unknown, env: NodeJS.ProcessEnv, overridden: Map<string, string>): unknown {
  const out = (raw && typeof raw === 'object' ? structuredClone(raw) : {}) as Record<string, unknown>;
  for (const [name, path, type] of ENV_OVERRIDES) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    let target = out;
    for (const key of path.slice(0, -1)) {
      target[key] = (target[key] && typeof target[key] === 'object' ? target[key] : {}) as Record<
        string,
        unknown
      >;
      target = target[key] as Record<string, unknown>;
    }
    target[path.at(-1)!] = parseEnvValue(name, value, type);
    overridden.set(path.join('.'), name);
  }
  return out;
}

function parseEnvValue(name: string, value: string, type: EnvType): unknown {
  if (type === 'number') {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n))
      throw new ConfigError(`${name}: expected a number, got "${value}"`);
    return n;
  }
  if (type === 'boolean') {
    if (/^(true|1|yes)$/i.test(value)) return true;
    if (/^(false|0|no)$/i.test(value)) return false;
    throw new ConfigError(`${name}: expected true or false, got "${value}"`);
  }
  return value;
}
