import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WORKLOAD_NAMES, createWorkload } from './create-workload.ts';
import { DEFAULT_DATA_DIR, resolveDataDir } from './read-data-file.ts';

const REPO_ROOT = resolve(import.meta.dirname, '../../../..');
const TRACE_FILES = readdirSync(DEFAULT_DATA_DIR).filter((name) => /\.(csv|jsonl)$/.test(name));

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('workload data folder', () => {
  it('defaults to data/workloads inside the repository when nothing overrides it', () => {
    vi.stubEnv('GOVERNOR_DATA_DIR', undefined);
    const dir = resolveDataDir();
    expect(relative(REPO_ROOT, dir)).toBe(join('data', 'workloads'));
    // Every trace-backed workload loads from the repository alone.
    for (const name of WORKLOAD_NAMES.filter((n) => !n.startsWith('synthetic')))
      expect(
        createWorkload(name, { seed: 1, durationMs: 600_000, dataDir: dir }).tasks.length,
      ).toBeGreaterThan(0);
  });

  it('lets --data-dir win over GOVERNOR_DATA_DIR, and GOVERNOR_DATA_DIR over the default', () => {
    vi.stubEnv('GOVERNOR_DATA_DIR', '/srv/traces');
    expect(resolveDataDir()).toBe('/srv/traces');
    expect(resolveDataDir('elsewhere')).toBe(resolve('elsewhere'));
  });

  it('keeps every trace at the size its README records, and names each one in README and NOTICE', () => {
    const readme = readFileSync(join(DEFAULT_DATA_DIR, 'README.md'), 'utf8');
    const notice = readFileSync(join(DEFAULT_DATA_DIR, 'NOTICE'), 'utf8');
    expect(TRACE_FILES).toHaveLength(7);
    for (const file of TRACE_FILES) {
      const row = readme.split('\n').find((line) => line.startsWith(`| \`${file}\``));
      expect(row, `${file} has a row in README.md`).toBeDefined();
      const bytes = Number(row!.split('|')[2]!.trim().replaceAll(',', ''));
      expect(statSync(join(DEFAULT_DATA_DIR, file)).size, file).toBe(bytes);
      expect(notice).toContain(file);
    }
  });
});
