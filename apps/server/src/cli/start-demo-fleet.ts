import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// `governor start --demo`: a simulated fleet in its own process (so it never competes with the
// server's event loop), replaying a synthetic mix of chat, copilot and agent workflows in real time
// from now on, in lockstep with Governor's control loop.

const SIMULATOR_CLI = join(dirname(fileURLToPath(import.meta.url)), '../../../simulator/src/cli.ts');

export interface DemoFleet {
  child: ChildProcess;
  stop(): void;
}

export function startDemoFleet(governorUrl: string, log: (message: string) => void): DemoFleet {
  const args = [
    ...process.execArgv,
    SIMULATOR_CLI,
    'sim',
    '--workload',
    'synthetic-mix',
    '--scenario',
    'gpu-degradation',
    '--duration',
    '24h',
    '--fault-start',
    '10m',
    '--fault-duration',
    '15m',
    '--speed',
    '1',
    '--start',
    new Date().toISOString(),
    '--lockstep',
    governorUrl,
    '--quiet',
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'inherit', 'inherit'] });
  log(
    'demo fleet started: a simulated 3-pool fleet replays synthetic chat/copilot/agent traffic in real time; one pool degrades after 10 minutes',
  );
  child.on('exit', (code, signal) => {
    if (signal !== 'SIGTERM') log(`demo fleet exited (${signal ?? `code ${code}`})`);
  });
  return {
    child,
    stop: () => {
      if (child.exitCode === null) child.kill('SIGTERM');
    },
  };
}
