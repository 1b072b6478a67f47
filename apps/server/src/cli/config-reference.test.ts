import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { GovernorConfig } from '@governor/conventions';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { checkConfig } from '../load-config.ts';
import { COMMAND_OPTIONS } from './command-options.ts';
import { runConfigCommand } from './config-command.ts';
import { listConfigKeys, renderConfigMarkdown } from './config-reference.ts';
import { parseArgs } from './parse-args.ts';

const REPO_ROOT = resolve(import.meta.dirname, '../../../..');
const dir = mkdtempSync(join(tmpdir(), 'governor-config-reference-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Dotted paths of every key of a parsed config, descending into objects (not lists). */
function keyPaths(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  return Object.entries(value).flatMap(([key, child]) => [
    `${prefix}${key}`,
    ...keyPaths(child, `${prefix}${key}.`),
  ]);
}

async function printDefaults(): Promise<string> {
  let out = '';
  const code = await runConfigCommand(parseArgs(['print-defaults'], COMMAND_OPTIONS.config), (t) => {
    out += t;
  });
  expect(code).toBe(0);
  return out;
}

describe('docs/config.md', () => {
  it('is what scripts/gen-config-docs.ts generates from the schema now (run pnpm docs:config)', () => {
    const page = readFileSync(join(REPO_ROOT, 'docs', 'config.md'), 'utf8');
    expect(page).toBe(renderConfigMarkdown());
  });

  it('has a row with a meaning for every key of a default config, and for list items', () => {
    const page = readFileSync(join(REPO_ROOT, 'docs', 'config.md'), 'utf8');
    const rows = new Map(
      page
        .split('\n')
        .filter((line) => line.startsWith('| `'))
        .map((line) => {
          const cells = line.split(/(?<!\\)\|/).map((c) => c.trim());
          return [cells[1]!.replaceAll('`', ''), cells[4]!] as const;
        }),
    );
    const defaults = keyPaths(GovernorConfig.parse({}));
    const listItems = ['pools[].name', 'pools[].match', 'alerts.rules[].objective', 'receivers[].url'];
    const sections = new Set(
      listConfigKeys()
        .filter((k) => (k.isObject || k.isObjectList) && k.depth === 0)
        .map((k) => k.path),
    );
    for (const path of [...defaults, ...listItems]) {
      // A top-level object or list of objects is a section heading; its keys are the rows.
      if (sections.has(path)) expect(page).toContain(`\n## ${path}\n`);
      else expect(rows.get(path), path).toMatch(/\w{3,}/);
    }
    expect(listConfigKeys().length).toBeGreaterThan(defaults.length);
  });
});

describe('governor config print-defaults', () => {
  it('prints YAML that config check accepts and that holds every default explicitly', async () => {
    const text = await printDefaults();
    const file = join(dir, 'defaults.yaml');
    writeFileSync(file, text);
    const checked = checkConfig(file, {});
    expect(checked.ok).toBe(true);
    const defaults = GovernorConfig.parse({});
    if (checked.ok) expect(checked.config).toEqual(defaults);
    // Not left to the schema: the file itself states every default.
    expect(JSON.parse(JSON.stringify(parse(text)))).toEqual(JSON.parse(JSON.stringify(defaults)));
  });

  it('comments every key, and shows keys without a default and list items commented out with their type', async () => {
    const text = await printDefaults();
    expect(text).toContain('# Port of OTLP/gRPC; 0 picks a free port.\n  grpc_port: 4317\n');
    expect(text).toMatch(/\n {2}# metric_points_ttl_hours: <number ≥ 0>\n/);
    expect(text).toMatch(/\n# {3}- name: <string> \(required\)\n/);
    expect(text).toMatch(/\n# {5}- type: "slo_burn_rate"\n/);
  });
});
