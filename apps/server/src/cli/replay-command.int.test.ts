import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BacktestReport } from '@governor/control';
import { createStore } from '@governor/store';
import { afterEach, expect, test, vi } from 'vitest';
import { startTestGovernor } from '../api/fixtures/control-test-governor.ts';
import { T0_MS, iso, sendTraffic } from '../api/fixtures/fleet-telemetry.ts';
import { COMMAND_OPTIONS } from './command-options.ts';
import { parseArgs } from './parse-args.ts';
import { runReplayCommand } from './replay-command.ts';

const cleanup: string[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const dir of cleanup.splice(0)) rmSync(dir, { recursive: true, force: true });
});

test('governor replay runs the loop over stored history without writing to it', async () => {
  // History: a healthy fleet, then one pool queueing past the SLO. No ticks ran while it was recorded.
  const g = await startTestGovernor();
  const h100 = { pool: 'h100-east', model: 'llama-8b', replicas: 2, ratePerS: 2, prefillMsPerToken: 1 };
  const a100 = {
    pool: 'a100-west',
    model: 'llama-8b',
    gpuType: 'A100',
    region: 'us-west',
    replicas: 2,
    ratePerS: 2,
    prefillMsPerToken: 1,
  };
  await sendTraffic(g.url, [h100, a100], T0_MS, T0_MS + 180_000);
  await sendTraffic(g.url, [{ ...h100, queueMs: 3000 }, a100], T0_MS + 180_000, T0_MS + 300_000);
  await g.close({ keepData: true });
  cleanup.push(g.dataDir);
  const configFile = join(g.dataDir, 'replay.yaml');
  writeFileSync(
    configFile,
    [
      'slo: {ttft_ms: 2000}',
      'pools:',
      '  - {name: h100-east, gpu_type: H100, model: llama-8b}',
      '  - {name: a100-west, gpu_type: A100, model: llama-8b}',
      'policies:',
      '  - {name: scale-auto, match: {kind: [scale]}, auto_apply: true}',
    ].join('\n'),
  );

  let stdout = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  const args = [
    '--from',
    iso(T0_MS + 30_000),
    '--to',
    iso(T0_MS + 300_000),
    '--data-dir',
    g.dataDir,
    '--config',
    configFile,
    '--json',
  ];
  expect(await runReplayCommand(parseArgs(args, COMMAND_OPTIONS.replay))).toBe(0);
  vi.restoreAllMocks();
  const report = JSON.parse(stdout) as BacktestReport;
  expect(report.ticks).toBe(10);
  const scaleUp = report.entries.find(
    (e) => e.recommendation.kind === 'scale' && e.recommendation.target.pool === 'h100-east',
  );
  expect(scaleUp).toMatchObject({ at: iso(T0_MS + 210_000), decision: 'auto_applied' });
  expect(scaleUp!.recommendation.reason).toMatch(/queueing/);
  // Cooldown holds in the replay too: no second scale-up of the pool within 300 s.
  expect(
    report.entries.filter(
      (e) => e.recommendation.target.pool === 'h100-east' && e.decision === 'auto_applied',
    ),
  ).toHaveLength(1);

  const store = await createStore({ dataDir: g.dataDir });
  try {
    const [row] = await store.query<{ n: number }>('SELECT count(*) AS n FROM control_recommendations');
    expect(row!.n).toBe(0);
  } finally {
    await store.close();
  }
});
