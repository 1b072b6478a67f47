import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../summary/run-summary.ts';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../../../..');
const cli = join(here, '../cli.ts');
const tsx = join(repoRoot, 'node_modules/.bin/tsx');

function runCli(args: string[]) {
  const result = spawnSync(tsx, [cli, 'sim', ...args], { cwd: repoRoot, encoding: 'utf8' });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('governor sim CLI (real process)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'governor-sim-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs, prints the summary table and writes the summary JSON', () => {
    const file = join(dir, 'summary.json');
    const { code, stdout } = runCli([
      '--workload',
      'burstgpt-3',
      '--duration',
      '10m',
      '--policy',
      'static-mean',
      '--summary-json',
      file,
      '--quiet',
    ]);
    expect(code).toBe(0);
    expect(stdout).toContain('goodput');
    expect(stdout).toContain('llama8b-h100-east');
    expect(stdout).toMatch(/wall time \d+\.\d+ s/);
    const summary = JSON.parse(readFileSync(file, 'utf8')) as RunSummary;
    expect(summary).toMatchObject({
      workload: 'burstgpt-3',
      policy: 'static-mean',
      scenario: 'none',
      seed: 1,
    });
    expect(summary.tasks).toBeGreaterThan(0);
  });

  it('exits with code 2 and names the valid workloads for an unknown one', () => {
    const { code, stderr } = runCli(['--workload', 'nope']);
    expect(code).toBe(2);
    expect(stderr).toContain('unknown workload "nope"');
    expect(stderr).toContain('azure-conv');
  });
});
