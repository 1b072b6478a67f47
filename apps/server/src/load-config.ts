import { readFileSync } from 'node:fs';
import { type GovernorConfig, parseGovernorConfig } from '@governor/conventions';
import { parse as parseYaml } from 'yaml';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Reads the YAML config (or defaults without a file), applies GOVERNOR_* environment overrides
 * and validates it. Errors name the file, the path inside it and what was expected.
 */
export function loadConfig(file: string | undefined, env: NodeJS.ProcessEnv = process.env): GovernorConfig {
  let raw: unknown = {};
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new ConfigError(`cannot read config file ${file}: ${(error as Error).message}`);
    }
    try {
      raw = parseYaml(text) ?? {};
    } catch (error) {
      throw new ConfigError(`${file}: not valid YAML: ${(error as Error).message}`);
    }
  }
  const withEnv = applyEnvOverrides(raw, env);
  const result = parseGovernorConfig(withEnv);
  if (!result.ok) {
    const where = file ?? '(defaults and environment)';
    throw new ConfigError(
      `invalid configuration in ${where}:\n${result.issues.map((i) => `  ${i.path}: ${i.message}`).join('\n')}`,
    );
  }
  return result.config;
}

const ENV_OVERRIDES: [string, string[], 'number' | 'string' | 'boolean'][] = [
  ['GOVERNOR_HOST', ['server', 'host'], 'string'],
  ['GOVERNOR_HTTP_PORT', ['server', 'http_port'], 'number'],
  ['GOVERNOR_GRPC_PORT', ['server', 'grpc_port'], 'number'],
  ['GOVERNOR_DATA_DIR', ['server', 'data_dir'], 'string'],
  ['GOVERNOR_MAX_BODY_BYTES', ['server', 'max_body_bytes'], 'number'],
  ['GOVERNOR_MAX_QUEUED_SPANS', ['server', 'max_queued_spans'], 'number'],
  ['GOVERNOR_INSECURE', ['server', 'insecure'], 'boolean'],
];

function applyEnvOverrides(raw: unknown, env: NodeJS.ProcessEnv): unknown {
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
    target[path.at(-1)!] =
      type === 'number' ? Number(value) : type === 'boolean' ? value === 'true' || value === '1' : value;
  }
  return out;
}
