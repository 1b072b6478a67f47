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

  it.each([
    [
      ['--bogus', '1'],
      ['Unknown option', '--workload'],
    ],
    [
      ['--workload', 'nope'],
      ['unknown workload "nope"', 'azure-conv', 'synthetic-mix'],
    ],
    [
      ['--scenario', 'meteor'],
      ['unknown scenario "meteor"', 'region-outage'],
    ],
    [
      ['--policy', 'magic'],
      ['unknown policy "magic"', 'static-peak', 'wva'],
    ],
    [
      ['--protocol', 'grpc'],
      ['http/json', 'http/protobuf'],
    ],
    [
      ['--duration', 'soon'],
      ['--duration', 'invalid duration'],
    ],
    [['--speed', '-2'], ['--speed']],
  ])('rejects %j with exit code 2 and names the valid choices', (args, expected) => {
    const { code, stderr } = runCli(args);
    expect(code).toBe(2);
    for (const text of expected) expect(stderr).toContain(text);
  });

  it('prints usage with --help', () => {
    const { code, stdout } = runCli(['--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('Usage: governor sim');
  });
});
