import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type DecodedTraceRequest, encodeTraceRequestProtobuf } from '@governor/otlp';
import { vllmTraceRequest } from '@governor/otlp/fixtures';
import {
  type IncomingMessage,
  type Server,
  type ServerResponse,
  createServer as createHttpServer,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDefaultFleet, runSimulation } from '@governor/simulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import {
  type ClickHouseCluster,
  type PostgresServer,
  startClickHouseCluster,
  startPostgres,
  expectClose,
} from '@governor/store/testing';
import { type RunningGovernor, startGovernor } from '../start-governor.ts';

// Two Governor nodes on a two-shard ClickHouse cluster and one PostgreSQL, as separate processes
// (`governor start`), beside one embedded-DuckDB node fed the same telemetry: the nodes' signals,
// traces and tasks equal the single node's; exactly one node leads; `kill -9` of the leader while
// exports stream loses no acknowledged span, the other node leads within two control intervals,
// and its repair sweep rolls up what the dead node acknowledged but never rolled up.

const REPO = resolve(import.meta.dirname, '../../../..');
const CONTROL_INTERVAL_S = 2;
const T0_MS = Date.now() - 20 * 60_000;
const POOLS = [
  { name: 'pool-a', model: 'llama-8b', gpu_type: 'H100' },
  { name: 'pool-b', model: 'qwen-32b', gpu_type: 'A100' },
];
/** The simulator's fleet, whose Kubernetes-shaped telemetry every node also takes. */
const FLEET = createDefaultFleet();

let cluster: ClickHouseCluster;
let postgres: PostgresServer;
let dir: string;
const nodes: Node[] = [];
let single: RunningGovernor;

interface Node {
  name: string;
  url: string;
  child: ChildProcess;
  log: string[];
}

async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? done(address.port) : fail(new Error('no port')),
      );
    });
  });
}

function baseConfig() {
  return {
    signals: { lateness_ms: 0 },
    slo: { ttft_ms: 500, e2e_ms: 5_000 },
    pricing: {
      gpu_hour_usd: {
        H100: 3.5,
        A100: 2,
        ...Object.fromEntries(FLEET.pools.map((p) => [p.gpuType, p.gpuHourUsd])),
      },
    },
    pools: [
      ...POOLS,
      ...FLEET.pools.map((p) => ({ name: p.name, gpu_type: p.gpuType, gpus_per_replica: p.gpusPerReplica })),
    ],
    control: { interval_s: CONTROL_INTERVAL_S },
  };
}

async function startNode(name: string): Promise<Node> {
  const http = await freePort();
  const grpc = await freePort();
  const config = join(dir, `${name}.yaml`);
  writeFileSync(
    config,
    stringify({
      ...baseConfig(),
      server: { host: '127.0.0.1', http_port: http, grpc_port: grpc },
      store: {
        engine: 'clickhouse',
        clickhouse: {
          url: cluster.shards[0]!.url,
          shard_urls: cluster.shards.map((s) => s.url),
          readonly_user_env: 'CLICKHOUSE_RO_USER',
        },
      },
    }),
  );
  const child = spawn(
    process.execPath,
    [
      '-r',
      './apps/server/threadpool-preload.cjs',
      '--import',
      'tsx',
      'apps/server/src/cli.ts',
      'start',
      '--config',
      config,
    ],
    {
      cwd: REPO,
      env: {
        ...process.env,
        GOVERNOR_POSTGRES_URL: postgres.url,
        CLICKHOUSE_RO_USER: 'governor_ro',
        GOVERNOR_LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const log: string[] = [];
  child.stdout?.on('data', (d: Buffer) => log.push(d.toString()));
  child.stderr?.on('data', (d: Buffer) => log.push(d.toString()));
  const node = { name, url: `http://127.0.0.1:${http}`, child, log };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited ${child.exitCode}:\n${log.join('')}`);
    try {
      if ((await fetch(`${node.url}/api/ready`)).ok) return node;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${name} did not become ready:\n${log.join('')}`);
    await sleep(200);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function isLeader(node: Node): Promise<boolean> {
  const text = await (await fetch(`${node.url}/metrics`)).text();
  return /^governor_control_leader 1$/m.test(text);
}

async function waitFor<T>(what: string, fn: () => Promise<T | null | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn().catch(() => null);
    if (value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** Retries a check until it passes; past the timeout its last failure is the test's. */
async function eventually(check: () => Promise<void>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(500);
    }
  }
}

/** One request per trace, alternating pools, as vLLM's spans under a gateway. */
function traffic(from: number, count: number): DecodedTraceRequest[] {
  return Array.from({ length: count }, (_, i) => {
    const n = from + i;
    const request = vllmTraceRequest({
      traceId: (n + 1).toString(16).padStart(32, '0'),
      startNs: BigInt(T0_MS + n * 50) * 1_000_000n,
      queueS: 0.005 + (n % 7) * 0.003,
      decodeS: 0.5 + (n % 11) * 0.1,
      instanceId: `${POOLS[n % 2]!.name}-${n % 3}`,
    });
    for (const r of request.resourceSpans)
      for (const s of r.scopeSpans)
        for (const span of s.spans) span.attributes['governor.pool'] = POOLS[n % 2]!.name;
    return request;
  });
}

function merge(requests: readonly DecodedTraceRequest[]): DecodedTraceRequest {
  return { resourceSpans: requests.flatMap((r) => r.resourceSpans) };
}

async function post(url: string, request: DecodedTraceRequest): Promise<number> {
  const response = await fetch(`${url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-protobuf' },
    body: encodeTraceRequestProtobuf(request),
  });
  await response.arrayBuffer();
  return response.status;
}

async function spansIn(table: string): Promise<number> {
  const r = await fetch(
    `${cluster.shards[1]!.url}/?query=${encodeURIComponent(`SELECT count() FROM governor.${table} FINAL`)}`,
  );
  return Number((await r.text()).trim());
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'governor-two-nodes-'));
  [cluster, postgres] = await Promise.all([startClickHouseCluster({ shards: 2 }), startPostgres()]);
  nodes.push(await startNode('a'));
  nodes.push(await startNode('b'));
  const config = {
    ...baseConfig(),
    server: { host: '127.0.0.1', http_port: 0, grpc_port: 0, data_dir: join(dir, 'single') },
  };
  const { GovernorConfig } = await import('@governor/conventions');
  single = await startGovernor({ config: GovernorConfig.parse(config), env: {} });
}, 180_000);

afterAll(async () => {
  await single?.close();
  const running = nodes.filter((n) => n.child.exitCode === null && n.child.signalCode === null);
  const exited = running.map((n) => new Promise((r) => n.child.once('exit', r)));
  for (const n of running) n.child.kill('SIGTERM');
  await Promise.all(exited);
  await cluster?.stop();
  await postgres?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('two Governor nodes on ClickHouse and PostgreSQL', () => {
  it('exactly one leads', async () => {
    await waitFor('a leader', async () => (await isLeader(nodes[0]!)) || (await isLeader(nodes[1]!)), 20_000);
    const leaders = await Promise.all(nodes.map(isLeader));
    expect(leaders.filter(Boolean)).toHaveLength(1);
  });

  it('give the signals, traces and tasks one embedded node gives on the same telemetry', async () => {
    const exports = traffic(0, 200);
    // Exports of ten requests, half through each node as a load balancer spreads them; all to the
    // single node.
    for (let i = 0; i < exports.length; i += 10) {
      const batch = merge(exports.slice(i, i + 10));
      const [viaNode, viaSingle] = await Promise.all([
        post(nodes[(i / 10) % 2]!.url, batch),
        post(single.httpUrl, batch),
      ]);
      expect([viaNode, viaSingle]).toEqual([200, 200]);
    }
    const spans = exports.reduce(
      (n, r) => n + r.resourceSpans.flatMap((x) => x.scopeSpans.flatMap((s) => s.spans)).length,
      0,
    );
    expect(await spansIn('span_store')).toBe(spans);
    const at = new Date(T0_MS + 200 * 50 + 60_000).toISOString();
    const query = `/api/signals?window=5m&by=pool&at=${at}`;
    const expected = await (await fetch(`${single.httpUrl}${query}`)).json();
    await waitFor(
      'the nodes’ rollups',
      async () => {
        const actual = (await (await fetch(`${nodes[0]!.url}${query}`)).json()) as {
          groups: { requests: number }[];
        };
        return actual.groups.reduce((n, g) => n + g.requests, 0) === 200;
      },
      20_000,
    );
    for (const node of nodes) {
      expectClose(await (await fetch(`${node.url}${query}`)).json(), expected, 'signals');
      const traces = `/api/traces?pool=pool-a&from=${new Date(T0_MS - 60_000).toISOString()}&to=${at}&limit=500`;
      expect(await (await fetch(`${node.url}${traces}`)).json()).toEqual(
        await (await fetch(`${single.httpUrl}${traces}`)).json(),
      );
      const tasks = `/api/tasks?from=${new Date(T0_MS - 60_000).toISOString()}&to=${at}&limit=50`;
      expect(await (await fetch(`${node.url}${tasks}`)).json()).toEqual(
        await (await fetch(`${single.httpUrl}${tasks}`)).json(),
      );
    }
  });

  it('give the same signals on the simulator’s Kubernetes-shaped telemetry (real OpenTelemetry exporters), every export to both engines', async () => {
    // Each export the simulator's exporters send goes to the embedded node and to one of the two
    // nodes (alternating, as a load balancer would); it is acknowledged once both stored it.
    let turn = 0;
    const proxy: Server = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const headers: Record<string, string> = {};
        for (const name of ['content-type', 'content-encoding'])
          if (typeof req.headers[name] === 'string') headers[name] = req.headers[name] as string;
        const send = (base: string) =>
          fetch(`${base}${req.url}`, { method: 'POST', headers, body: Buffer.concat(chunks) });
        const node = nodes[turn++ % 2]!;
        const [a, b] = await Promise.all([send(single.httpUrl), send(node.url)]);
        const body = Buffer.from(await a.arrayBuffer());
        await b.arrayBuffer();
        res
          .writeHead(a.ok && b.ok ? a.status : 503, { 'content-type': a.headers.get('content-type') ?? '' })
          .end(body);
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    try {
      const summary = await runSimulation({
        workload: 'synthetic-mix',
        durationMs: 120_000,
        speed: 'max',
        seed: 5,
        target: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
        startEpochMs: Date.UTC(2026, 5, 1),
        sloTtftMs: 500,
        sloE2eMs: 5_000,
        log: () => {},
      });
      expect(summary.telemetry?.spansFailed).toBe(0);
      expect(summary.telemetry?.metricPointsFailed).toBe(0);
      const startMs = Date.parse(summary.simStart);
      const at = new Date(Date.parse(summary.simEnd) + 1).toISOString();
      const window = `${Date.parse(summary.simEnd) + 1 - startMs}ms`;
      const read = async (base: string, path: string) => {
        const response = await fetch(`${base}${path}`);
        expect(response.status, path).toBe(200);
        return response.json();
      };
      const total = `/api/signals?window=${window}&at=${at}`;
      await waitFor(
        'the nodes’ rollups',
        async () => {
          const [expected, actual] = (await Promise.all([
            read(single.httpUrl, total),
            read(nodes[0]!.url, total),
          ])) as {
            groups: { requests: number }[];
          }[];
          return (
            expected!.groups[0]!.requests > 0 && actual!.groups[0]?.requests === expected!.groups[0]!.requests
          );
        },
        30_000,
      );
      for (const by of ['pool', 'model', 'gpu_type,region', 'tenant,priority']) {
        const path = `/api/signals?window=${window}&at=${at}&by=${by}`;
        const expected = (await read(single.httpUrl, path)) as { groups: unknown[] };
        expect(expected.groups.length, by).toBeGreaterThan(1);
        // A node's learned peak (compute utilisation) read while the rollups caught up is read
        // again within 30 s (create-signals.ts): equal by then.
        for (const node of nodes)
          await eventually(
            async () => expectClose(await read(node.url, path), expected, `signals by ${by}`),
            45_000,
          );
      }
      const series = `/api/signals/series?signal=ttftMs.p95&by=pool&from=${summary.simStart}&to=${at}&step=30s`;
      const expectedSeries = (await read(single.httpUrl, series)) as {
        series: { points: { v: number | null }[] }[];
      };
      expect(
        expectedSeries.series.flatMap((s) => s.points).filter((p) => p.v !== null).length,
      ).toBeGreaterThan(10);
      for (const node of nodes) expectClose(await read(node.url, series), expectedSeries, 'series');
      const tasks = `/api/tasks?from=${summary.simStart}&to=${at}&limit=100`;
      expectClose(await read(nodes[1]!.url, tasks), await read(single.httpUrl, tasks), 'tasks');
    } finally {
      await new Promise((r) => proxy.close(r));
    }
  }, 180_000);

  it('kill -9 of the leader while exports stream: no acknowledged span lost, the other node leads within two control intervals and rolls up what the dead one acknowledged', async () => {
    const leader = (await isLeader(nodes[0]!)) ? nodes[0]! : nodes[1]!;
    const survivor = leader === nodes[0] ? nodes[1]! : nodes[0]!;
    const before = await spansIn('span_store');
    let acknowledged = 0;
    let next = 1_000;
    let killedAt = 0;
    let tookOver: Promise<number> | null = null;
    // Exports to both nodes until a while after the kill; a refused or broken one is not counted.
    const senders = [leader, survivor].map(async (node) => {
      for (let sent = 0; sent < 150; sent++) {
        const request = traffic(next++, 1)[0]!;
        const status = await post(node.url, request).catch(() => 0);
        if (status === 200)
          acknowledged += request.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)).length;
        if (node === leader && sent === 40) {
          leader.child.kill('SIGKILL');
          killedAt = Date.now();
          // When the survivor took the lease, by its own log (its /metrics, rendering the signals on
          // a loaded machine, may answer later than that).
          tookOver = waitFor('the survivor to lead', () => isLeader(survivor), 20_000).then(() => {
            const line = survivor.log
              .join('')
              .split('\n')
              .filter((l) => l.includes('this node now leads'))
              .map((l) => JSON.parse(l) as { time: number })
              .find((l) => l.time >= killedAt);
            if (!line) throw new Error(`the survivor's log does not say it leads:\n${survivor.log.join('')}`);
            return line.time - killedAt;
          });
        }
        if (node === leader && killedAt > 0) break;
      }
    });
    await Promise.all(senders);
    expect(killedAt).toBeGreaterThan(0);
    expect(await tookOver).toBeLessThanOrEqual(2 * CONTROL_INTERVAL_S * 1000);
    expect(await spansIn('span_store')).toBeGreaterThanOrEqual(before + acknowledged);
    // Every trace stored ends up with its request facts (the leader's repair sweep).
    const traces = async () => {
      const r = await fetch(
        `${cluster.shards[0]!.url}/?query=${encodeURIComponent('SELECT uniqExact(trace_id) FROM governor.span_store')}`,
      );
      return Number((await r.text()).trim());
    };
    const requests = async () => {
      const r = await fetch(
        `${cluster.shards[0]!.url}/?query=${encodeURIComponent('SELECT uniqExact(trace_id) FROM governor.request_facts FINAL WHERE deleted = 0')}`,
      );
      return Number((await r.text()).trim());
    };
    const stored = await traces();
    // Within the sweep interval (30 s), the settle time (max_rollup_lag + two runs) and the run.
    await waitFor('every stored trace rolled up', async () => (await requests()) === stored, 100_000);
  }, 180_000);
});
