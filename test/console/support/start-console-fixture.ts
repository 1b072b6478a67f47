import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { type IncomingMessage, type Server, createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type RunningGovernor, loadConfig, startGovernor } from '../../../apps/server/src/index.ts';
import { runSimulation } from '../../../apps/simulator/src/index.ts';
import { GovernorConfig } from '../../../packages/conventions/src/index.ts';

// A real Governor (ephemeral ports, temp data dir, temp dashboards dir seeded with the shipped
// dashboards) serving the built console, fed by the simulator over OTLP/HTTP, with a real
// webhook receiver for alert deliveries. The control loop runs in lockstep with the simulator
// (a tick every control interval of simulated time, as in production); no policy auto-applies,
// so its recommendations wait in the inbox for the test to decide.

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const CONSOLE_DIST = join(REPO, 'apps/console/dist');

export interface ConsoleFixture {
  governor: RunningGovernor;
  url: string;
  dashboardsDir: string;
  /** The pools of config/demo.yaml, which the simulator's default fleet runs. */
  demoPools: string[];
  /** Bodies the webhook receiver got. */
  webhookBodies: unknown[];
  close(): Promise<void>;
}

/** `pnpm test` builds the console first; a direct vitest run builds it here if it is missing. */
export function ensureConsoleBuilt(): void {
  if (existsSync(join(CONSOLE_DIST, 'index.html'))) return;
  execFileSync('npx', ['vite', 'build'], { cwd: join(REPO, 'apps/console'), stdio: 'inherit' });
}

async function startWebhookReceiver(bodies: unknown[]): Promise<{ server: Server; url: string }> {
  const server = createServer((request: IncomingMessage, response) => {
    let text = '';
    request.on('data', (chunk) => {
      text += chunk;
    });
    request.on('end', () => {
      try {
        bodies.push(JSON.parse(text));
      } catch {
        bodies.push(text);
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { server, url: `http://127.0.0.1:${port}/hook` };
}

/** Polls a condition (each check is a real request) until it holds or `timeoutMs` passes. */
async function waitUntil(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 200));
  }
}

export async function startConsoleFixture(): Promise<ConsoleFixture> {
  ensureConsoleBuilt();
  const dataDir = mkdtempSync(join(tmpdir(), 'governor-console-e2e-'));
  const dashboardsDir = mkdtempSync(join(tmpdir(), 'governor-dashboards-'));
  for (const file of readdirSync(join(REPO, 'dashboards')).filter((f) => f.endsWith('.json'))) {
    copyFileSync(join(REPO, 'dashboards', file), join(dashboardsDir, file));
  }
  const webhookBodies: unknown[] = [];
  const webhook = await startWebhookReceiver(webhookBodies);
  // The demo's own pools, prices and SLO (config/demo.yaml, what `pnpm start` runs), so the console
  // is tested on the fleet an operator sees first.
  const demo = loadConfig(join(REPO, 'config/demo.yaml'), {});
  const config = GovernorConfig.parse({
    server: { http_port: 0, grpc_port: 0, data_dir: dataDir },
    pricing: demo.pricing,
    pools: demo.pools,
    slo: demo.slo,
    // Raw spans older than 2 min (event time) go to Parquet, but only when the storage test asks
    // (POST /api/retention/run, after the views that read spans): the run at start finds the
    // tables empty and the next scheduled one is a day away.
    retention: { spans_ttl_hours: 2 / 60, metric_points_ttl_hours: 0, run_interval_s: 86_400 },
    control: { tick: 'lockstep' },
    dashboards: { dir: dashboardsDir },
    alerts: {
      rules: [
        {
          name: 'ttft-slo',
          signal: 'ttftMs.p95',
          by: ['pool'],
          op: '>',
          threshold: 1500,
          receivers: ['ops-webhook'],
          annotations: { summary: 'TTFT p95 {{ $value }} ms on {{ $labels.pool }}' },
        },
      ],
    },
    receivers: [{ name: 'ops-webhook', type: 'webhook', url: webhook.url }],
  });
  const governor = await startGovernor({ config, env: {} });
  // The first retention run starts with Governor; let it finish on the empty tables before the
  // simulated traffic arrives, so that all spans are live until the storage test exports some.
  await waitUntil(async () => {
    const storage = (await (await fetch(`${governor.httpUrl}/api/storage`)).json()) as {
      retention: { nextRunAt: string | null };
    };
    return storage.retention.nextRunAt !== null;
  }, 'the first retention run to finish');
  const simulatedMs = 6 * 60_000;
  await runSimulation({
    workload: 'synthetic-mix',
    durationMs: simulatedMs,
    // The data ends mid-traffic, so the last recommendations are still open at the end.
    drainMs: 0,
    speed: 'max',
    seed: 7,
    target: governor.httpUrl,
    lockstep: governor.httpUrl,
    startEpochMs: Date.now() - simulatedMs,
    log: () => {},
  });
  // Alert rules evaluate behind ingest; the alerts view needs one firing alert to show.
  await waitUntil(async () => {
    const alerts = (await (await fetch(`${governor.httpUrl}/api/alerts`)).json()) as { active: unknown[] };
    return alerts.active.length > 0;
  }, 'an alert to fire after the simulated traffic');
  return {
    governor,
    url: governor.httpUrl,
    dashboardsDir,
    demoPools: demo.pools.map((p) => p.name),
    webhookBodies,
    async close() {
      await governor.close();
      await new Promise<void>((done) => webhook.server.close(() => done()));
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(dashboardsDir, { recursive: true, force: true });
    },
  };
}
