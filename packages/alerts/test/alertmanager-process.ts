import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reservePort } from './http-receiver.ts';

export const ALERTMANAGER_BIN = '/usr/bin/prometheus-alertmanager';

export interface RunningAlertmanager {
  url: string;
  /** GET /api/v2/alerts: the alerts Alertmanager holds as active (resolved ones are left out). */
  alerts(): Promise<
    { labels: Record<string, string>; startsAt: string; endsAt: string; fingerprint: string }[]
  >;
  stop(): Promise<void>;
}

/**
 * A real Prometheus Alertmanager (Debian's prometheus-alertmanager; scripts/ensure-system-deps.mjs
 * installs it) with a temp config and storage, listening on a free port, clustering off.
 */
export async function startAlertmanager(): Promise<RunningAlertmanager> {
  if (!existsSync(ALERTMANAGER_BIN)) {
    throw new Error(
      `${ALERTMANAGER_BIN} is missing; install it with: apt-get install -y prometheus-alertmanager`,
    );
  }
  const dir = mkdtempSync(join(tmpdir(), 'governor-alertmanager-'));
  const config = join(dir, 'alertmanager.yml');
  writeFileSync(config, 'route:\n  receiver: blackhole\nreceivers:\n  - name: blackhole\n');
  const port = await reservePort();
  const url = `http://127.0.0.1:${port}`;
  const output: string[] = [];
  const child: ChildProcess = spawn(
    ALERTMANAGER_BIN,
    [
      `--config.file=${config}`,
      `--storage.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--cluster.listen-address=',
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout?.on('data', (d) => output.push(String(d)));
  child.stderr?.on('data', (d) => output.push(String(d)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  // Ready when /-/ready answers 200; give up if the process exits first.
  let ready = false;
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  const deadline = Date.now() + 30_000;
  while (!ready) {
    if (gone || Date.now() > deadline) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`Alertmanager did not become ready:\n${output.join('')}`);
    }
    ready = await fetch(`${url}/-/ready`)
      .then((r) => r.ok)
      .catch(() => false);
    if (!ready) await new Promise((resolve) => setTimeout(resolve, 50));
  }

  return {
    url,
    async alerts() {
      const response = await fetch(`${url}/api/v2/alerts`);
      if (!response.ok) throw new Error(`GET /api/v2/alerts: HTTP ${response.status}`);
      return (await response.json()) as Awaited<ReturnType<RunningAlertmanager['alerts']>>;
    },
    async stop() {
      if (!gone) {
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
