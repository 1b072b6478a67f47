import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { quantileContOfSorted } from '@governor/conventions';
import {
  type ClickHouseCluster,
  type PostgresServer,
  startClickHouseCluster,
  startPostgres,
} from '@governor/store/testing';
import { stringify } from 'yaml';
import { type BatchSource, createBatchSource } from './create-batch-source.ts';
import { postProtobuf, waitForRollup } from './run-ingest-bench.ts';
import { machineBusyCpuMs, peakRssBytes, processCpuMs, requireServers } from './scale-out-engines.ts';
import { IDLE_SOCKET_TIMEOUT_MS } from './soak-run.ts';
import { type GovernorProcess, spawnGovernorProcess } from './spawn-governor-process.ts';

// `governor bench ingest --engine clickhouse --nodes N`: the same OTLP/HTTP protobuf load through
// N Governor nodes on store.engine: clickhouse (a ClickHouse cluster of S shards and a PostgreSQL,
// started here with the test helpers) and through one DuckDB node (store.engine: duckdb, a child
// process as `bench ingest` runs it), one after the other in the same run. Each request is one
// batch of whole traces; batch i goes to node i mod N, as a Collector's loadbalancing exporter
// routes by trace id. Per side: spans/s acknowledged, ack p50/p99, each node's peak RSS and CPU,
// the ClickHouse servers' CPU (/proc/<pid>/stat), and the rollup lag after the last ack (until
// request_facts holds every trace span_store holds).

export interface ClusterIngestBenchOptions {
  nodes: number;
  shards: number;
  spans: number;
  clients: number;
  batch: number;
  checkpointIntervalS: number;
  decodeWorkers?: number;
  ingestOnly?: boolean;
  /** Give up waiting for the rollup after this long (the lag is then reported as not reached). */
  rollupTimeoutS: number;
  onProgress: (line: string) => void;
}

/** CPU ms used over a phase, by part of the benchmark. */
export interface PhaseCpu {
  wallS: number;
  /** Each Governor node: its main thread and all of its threads. */
  nodes: { mainThreadMs: number; processMs: number }[];
  /** Each clickhouse-server process (empty on the DuckDB side). */
  clickhouseMs: number[];
  /** This process: the load generator (and its pollers). */
  loadGeneratorMs: number;
  /** Busy CPU of the whole machine (null off Linux): the rest is PostgreSQL and other tenants' load. */
  machineMs: number | null;
}

export interface SideResult {
  engine: 'duckdb' | 'clickhouse';
  nodes: number;
  shards: number;
  spansAcked: number;
  requests: number;
  retries: number;
  elapsedS: number;
  ackedSpansPerS: number;
  /**
   * Each node: its clients, what it acknowledged at what rate (until its own last ack), the
   * requests it refused (429/503), and why (governor_ingest_requests_rejected_total, read at the end).
   */
  perNode: {
    clients: number;
    spansAcked: number;
    spansPerS: number;
    retries: number;
    refusedByReason: Record<string, number>;
  }[];
  ackP50Ms: number;
  ackP99Ms: number;
  ackMaxMs: number;
  /** Peak RSS (VmHWM) of each node. */
  nodePeakRssBytes: number[];
  /** Seconds from the last ack until the rollup held every trace; null if not within the timeout. */
  rollupLagS: number | null;
  /** From the start of the timed load to the last ack. */
  ingestCpu: PhaseCpu;
  /** From the last ack until the rollup caught up (or gave up). */
  rollupTailCpu: PhaseCpu;
  /**
   * ClickHouse's own counters (system.events, summed over the shards) over each phase: inserts,
   * merges, query threads' CPU — where the servers' CPU went. Empty on the DuckDB side.
   */
  clickhouseEvents: { ingest: Record<string, number>; rollupTail: Record<string, number> };
}

export interface ClusterIngestBenchResult {
  spansPerBatch: number;
  clients: number;
  duckdb: SideResult;
  clickhouse: SideResult;
}

export async function runClusterIngestBench(
  options: ClusterIngestBenchOptions,
): Promise<ClusterIngestBenchResult> {
  requireServers({ clickhouse: true, postgres: true }, 'governor bench ingest --engine clickhouse');
  const log = options.onProgress;
  const source = createBatchSource(options.batch, Math.floor(Math.random() * 0xffffffff));
  const batches = Math.max(1, Math.ceil(options.spans / source.spansPerBatch));
  const dir = mkdtempSync(join(tmpdir(), 'governor-bench-cluster-'));
  const serverYaml = {
    server: { checkpoint_interval_s: options.checkpointIntervalS },
    ...(options.ingestOnly ? { control: { enabled: false } } : {}),
  };
  const workerEnv: Record<string, string> =
    options.decodeWorkers === undefined ? {} : { GOVERNOR_DECODE_WORKERS: String(options.decodeWorkers) };
  try {
    // 1. One DuckDB node, as `bench ingest` runs one (process mode), before the cluster exists.
    log('— one DuckDB node (store.engine: duckdb, a child process)');
    const duckConfig = join(dir, 'duckdb.yaml');
    writeFileSync(duckConfig, stringify(serverYaml));
    const duckDir = join(dir, 'duckdb-data');
    const duck = await spawnGovernorProcess({
      dataDir: duckDir,
      args: ['--config', duckConfig],
      env: workerEnv,
      startTimeoutMs: 120_000,
    });
    let duckdb: SideResult;
    try {
      log(`  node up at ${duck.url} (allocator ${duck.allocator()})`);
      duckdb = await runSide({
        engine: 'duckdb',
        shards: 1,
        nodes: [duck],
        clickhousePids: [],
        clickhouseUrls: [],
        source,
        batches,
        options,
        waitForWarmupRollup: async () => {
          await waitForRollup(duck.url, undefined, 180_000);
        },
        waitForRollup: async (timeoutMs) => waitForRollup(duck.url, undefined, timeoutMs),
      });
    } finally {
      await stopNodes([duck]);
      rmSync(duckDir, { recursive: true, force: true });
    }

    // 2. N nodes on ClickHouse + PostgreSQL.
    log(
      `— ${options.nodes} Governor nodes on store.engine: clickhouse (${options.shards} shards) and PostgreSQL 15`,
    );
    const startedServers = performance.now();
    let cluster: ClickHouseCluster | null = null;
    let postgres: PostgresServer | null = null;
    const nodes: GovernorProcess[] = [];
    try {
      [cluster, postgres] = await Promise.all([
        startClickHouseCluster({ shards: options.shards }),
        startPostgres(),
      ]);
      const ch = cluster;
      log(
        `  ClickHouse shards ${ch.shards.map((s) => `${s.url} (pid ${s.pid})`).join(', ')}; PostgreSQL at ${postgres.url}; ` +
          `up in ${((performance.now() - startedServers) / 1000).toFixed(1)} s`,
      );
      for (let i = 0; i < options.nodes; i++) {
        const config = join(dir, `node-${i + 1}.yaml`);
        writeFileSync(
          config,
          stringify({
            ...serverYaml,
            store: {
              engine: 'clickhouse',
              clickhouse: {
                // Each node enters the cluster through another server (as behind a load balancer).
                url: ch.shards[i % ch.shards.length]!.url,
                shard_urls: ch.shards.map((s) => s.url),
              },
            },
          }),
        );
        // One at a time: each node creates the tables (IF NOT EXISTS) and migrates PostgreSQL.
        const node = await spawnGovernorProcess({
          dataDir: join(dir, `node-${i + 1}-data`),
          args: ['--config', config],
          env: { ...workerEnv, GOVERNOR_POSTGRES_URL: postgres.url },
          startTimeoutMs: 120_000,
        });
        nodes.push(node);
        log(`  node ${i + 1} up at ${node.url} (pid ${node.pid}, allocator ${node.allocator()})`);
      }
      const queryUrl = ch.shards[0]!.url;
      const clickhouse = await runSide({
        engine: 'clickhouse',
        shards: options.shards,
        nodes,
        clickhousePids: ch.shards.map((s) => s.pid),
        clickhouseUrls: ch.shards.map((s) => s.url),
        source,
        batches,
        options,
        waitForWarmupRollup: async () => {
          await waitForClickHouseRollup(queryUrl, 180_000, () => undefined);
        },
        waitForRollup: (timeoutMs) =>
          waitForClickHouseRollup(queryUrl, timeoutMs, (c, s) =>
            log(
              `  rollup: request_facts holds ${fmt(c.facts)} of ${fmt(c.traces)} traces (${s.toFixed(0)} s after the last ack)`,
            ),
          ),
      });
      return { spansPerBatch: source.spansPerBatch, clients: options.clients, duckdb, clickhouse };
    } finally {
      await stopNodes(nodes);
      await cluster?.stop();
      await postgres?.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Warm-up requests (JIT, connections, the first parts), not counted. */
const WARMUP_MAX = 40;

interface SideOptions {
  engine: 'duckdb' | 'clickhouse';
  shards: number;
  nodes: readonly GovernorProcess[];
  clickhousePids: readonly number[];
  /** HTTP URL of each ClickHouse server, for its system.events. */
  clickhouseUrls: readonly string[];
  source: BatchSource;
  batches: number;
  options: ClusterIngestBenchOptions;
  waitForWarmupRollup(): Promise<void>;
  /** Resolves with the seconds until the rollup held everything acknowledged, null at the timeout. */
  waitForRollup(timeoutMs: number): Promise<number | null>;
}

interface CpuMark {
  atMs: number;
  nodes: { mainThreadMs: number; processMs: number }[];
  clickhouseMs: number[];
  selfMs: number;
  machineMs: number | null;
}

async function runSide(side: SideOptions): Promise<SideResult> {
  const { options, source, nodes } = side;
  const log = options.onProgress;
  const label = side.engine === 'duckdb' ? 'duckdb ×1' : `clickhouse ×${nodes.length}`;
  const agents = nodes.map(
    () => new Agent({ keepAlive: true, maxSockets: options.clients, timeout: IDLE_SOCKET_TIMEOUT_MS }),
  );
  const targets = nodes.map((n) => new URL('/v1/traces', n.url));
  const token = process.env.GOVERNOR_TOKEN;
  const send = (node: number, body: Buffer) => postProtobuf(targets[node]!, agents[node]!, token, body);
  // Batch i to node i mod N: a batch is whole traces, as the loadbalancing exporter routes them.
  const nodeOf = (index: number) => index % nodes.length;
  const peakRss = nodes.map(() => 0);
  const sampleRss = () =>
    nodes.map((n, i) => {
      const m = n.memory();
      if (m) peakRss[i] = Math.max(peakRss[i]!, m.rssBytes, m.peakRssBytes);
      return m?.rssBytes ?? 0;
    });
  const mark = (): CpuMark => {
    const self = process.cpuUsage();
    return {
      atMs: performance.now(),
      nodes: nodes.map((n) => {
        const cpu = n.cpu();
        return { mainThreadMs: cpu?.mainThreadOnCpuMs ?? 0, processMs: cpu?.processCpuMs ?? 0 };
      }),
      clickhouseMs: side.clickhousePids.map(processCpuMs),
      selfMs: (self.user + self.system) / 1000,
      machineMs: machineBusyCpuMs(),
    };
  };

  try {
    const warmup = Math.min(options.clients * 4, WARMUP_MAX);
    const warmupBase = side.batches;
    await Promise.all(
      Array.from({ length: warmup }, (_, i) =>
        send(nodeOf(i), source.batch(warmupBase + i)).then(({ status }) => {
          if (status !== 200) throw new Error(`a node answered ${status} to a warm-up batch`);
        }),
      ),
    );
    await side.waitForWarmupRollup();

    // The clients split among the nodes, each node's clients taking its batches (i mod N = node):
    // as the loadbalancing exporter's per-backend queues, a slow node does not hold the others'.
    const queues = nodes.map((_, k) => ({
      next: k,
      acked: 0,
      retries: 0,
      finishedMs: 0,
      clients: Math.max(
        1,
        Math.floor(options.clients / nodes.length) + (k < options.clients % nodes.length ? 1 : 0),
      ),
    }));
    let acked = 0;
    let requests = 0;
    let retries = 0;
    const latencies: number[] = [];
    const total = side.batches * source.spansPerBatch;
    const eventsAtStart = await clickHouseEvents(side.clickhouseUrls);
    const start = mark();
    let lastMark = start;
    const progress = setInterval(() => {
      const now = mark();
      const s = (now.atMs - start.atMs) / 1000;
      const wall = now.atMs - lastMark.atMs || 1;
      const nodeCpu = now.nodes.map((n, i) => `${pct(n.processMs - lastMark.nodes[i]!.processMs, wall)}`);
      const chCpu =
        now.clickhouseMs.reduce((a, b) => a + b, 0) - lastMark.clickhouseMs.reduce((a, b) => a + b, 0);
      const rss = sampleRss();
      log(
        `  [${label}] ${fmt(acked)}/${fmt(total)} spans acked${nodes.length > 1 ? ` (${queues.map((q) => fmt(q.acked)).join(' + ')})` : ''}, ${fmt(acked / s)} spans/s; ` +
          `node CPU ${nodeCpu.join(' + ')} %${side.clickhousePids.length > 0 ? `, ClickHouse ${pct(chCpu, wall)} %` : ''}; ` +
          `RSS ${rss.map((b) => (b / 2 ** 20).toFixed(0)).join(' + ')} MiB`,
      );
      lastMark = now;
    }, 2000);
    const client = async (node: number) => {
      const queue = queues[node]!;
      for (;;) {
        const index = queue.next;
        if (index >= side.batches) return;
        queue.next += nodes.length;
        const body = source.batch(index);
        for (;;) {
          const sent = performance.now();
          const { status, retryAfterS } = await send(node, body);
          latencies.push(performance.now() - sent);
          requests++;
          if (status === 200) break;
          if (status === 429 || status === 503) {
            retries++;
            queue.retries++;
            await new Promise((resolve) => setTimeout(resolve, Math.min(1000, retryAfterS * 1000)));
            continue;
          }
          throw new Error(`node ${node + 1} answered ${status} to batch ${index}`);
        }
        acked += source.spansPerBatch;
        queue.acked += source.spansPerBatch;
      }
    };
    try {
      await Promise.all(
        queues.map(async (queue, node) => {
          await Promise.all(Array.from({ length: queue.clients }, () => client(node)));
          queue.finishedMs = performance.now();
        }),
      );
    } finally {
      clearInterval(progress);
    }
    const lastAck = mark();
    const eventsAtLastAck = await clickHouseEvents(side.clickhouseUrls);
    sampleRss();
    const elapsedS = (lastAck.atMs - start.atMs) / 1000;
    log(
      `  [${label}] ${fmt(acked)} spans acked in ${elapsedS.toFixed(1)} s (${fmt(acked / elapsedS)} spans/s); waiting for the rollup…`,
    );
    const rollupLagS = await side.waitForRollup(options.rollupTimeoutS * 1000);
    const caughtUp = mark();
    const eventsAtEnd = await clickHouseEvents(side.clickhouseUrls);
    sampleRss();
    const refusals = await Promise.all(nodes.map((n) => readRefusals(n.url)));
    log(
      rollupLagS === null
        ? `  [${label}] the rollup had not caught up ${options.rollupTimeoutS} s after the last ack`
        : `  [${label}] rollup caught up ${rollupLagS.toFixed(1)} s after the last ack`,
    );
    latencies.sort((a, b) => a - b);
    const q = (p: number) => (latencies.length === 0 ? 0 : quantileContOfSorted(latencies, p));
    return {
      engine: side.engine,
      nodes: nodes.length,
      shards: side.shards,
      spansAcked: acked,
      requests,
      retries,
      elapsedS,
      ackedSpansPerS: acked / elapsedS,
      perNode: queues.map((q, i) => ({
        clients: q.clients,
        spansAcked: q.acked,
        spansPerS: q.acked / ((q.finishedMs - start.atMs) / 1000),
        retries: q.retries,
        refusedByReason: refusals[i]!,
      })),
      ackP50Ms: q(0.5),
      ackP99Ms: q(0.99),
      ackMaxMs: latencies.at(-1) ?? 0,
      nodePeakRssBytes: nodes.map((n, i) => Math.max(peakRss[i]!, peakRssBytes(n.pid))),
      rollupLagS,
      ingestCpu: phase(start, lastAck),
      rollupTailCpu: phase(lastAck, caughtUp),
      clickhouseEvents: {
        ingest: difference(eventsAtLastAck, eventsAtStart),
        rollupTail: difference(eventsAtEnd, eventsAtLastAck),
      },
    };
  } finally {
    for (const agent of agents) agent.destroy();
  }
}

function phase(from: CpuMark, to: CpuMark): PhaseCpu {
  return {
    wallS: (to.atMs - from.atMs) / 1000,
    nodes: to.nodes.map((n, i) => ({
      mainThreadMs: n.mainThreadMs - from.nodes[i]!.mainThreadMs,
      processMs: n.processMs - from.nodes[i]!.processMs,
    })),
    clickhouseMs: to.clickhouseMs.map((ms, i) => ms - from.clickhouseMs[i]!),
    loadGeneratorMs: to.selfMs - from.selfMs,
    machineMs: to.machineMs === null || from.machineMs === null ? null : to.machineMs - from.machineMs,
  };
}

/** The node's OTLP requests refused as a whole, by reason (its /metrics; read once, at the end). */
async function readRefusals(url: string): Promise<Record<string, number>> {
  try {
    const response = await fetch(new URL('/metrics', url), { signal: AbortSignal.timeout(60_000) });
    if (!response.ok) return {};
    const text = await response.text();
    const out: Record<string, number> = {};
    for (const m of text.matchAll(/^governor_ingest_requests_rejected_total\{reason="([^"]+)"\} (\S+)$/gm))
      out[m[1]!] = Number(m[2]);
    return out;
  } catch {
    return {};
  }
}

/** system.events of every server, summed (counters since each server started). */
async function clickHouseEvents(urls: readonly string[]): Promise<Record<string, number>> {
  const sums: Record<string, number> = {};
  for (const url of urls) {
    try {
      const response = await fetch(
        `${url}/?query=${encodeURIComponent('SELECT event, value FROM system.events FORMAT TabSeparated')}`,
      );
      if (!response.ok) continue;
      for (const line of (await response.text()).split('\n')) {
        const [event, value] = line.split('\t');
        if (event && value) sums[event] = (sums[event] ?? 0) + Number(value);
      }
    } catch {
      // A figure for the report only.
    }
  }
  return sums;
}

function difference(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)]));
}

interface RollupCounts {
  traces: number;
  facts: number;
}

async function clickHouseCount(url: string, sql: string): Promise<number> {
  const response = await fetch(`${url}/?query=${encodeURIComponent(sql)}`);
  const text = (await response.text()).trim();
  if (!response.ok) throw new Error(`ClickHouse answered ${response.status}: ${text.split('\n')[0]}`);
  return Number(text);
}

/** Traces in span_store, and traces with current request facts (the rollup's output). */
async function clickHouseRollupCounts(url: string): Promise<RollupCounts> {
  const [traces, facts] = await Promise.all([
    clickHouseCount(url, 'SELECT uniqExact(trace_id) FROM governor.span_store'),
    clickHouseCount(url, 'SELECT uniqExact(trace_id) FROM governor.request_facts FINAL WHERE deleted = 0'),
  ]);
  return { traces, facts };
}

/** Polls until request_facts holds every trace of span_store; the seconds it took, null at the timeout. */
async function waitForClickHouseRollup(
  url: string,
  timeoutMs: number,
  onProgress: (counts: RollupCounts, seconds: number) => void,
): Promise<number | null> {
  const started = performance.now();
  let lastReport = started;
  for (;;) {
    const counts = await clickHouseRollupCounts(url);
    const now = performance.now();
    if (counts.traces > 0 && counts.facts >= counts.traces) return (now - started) / 1000;
    if (now - started > timeoutMs) return null;
    if (now - lastReport >= 5000) {
      onProgress(counts, (now - started) / 1000);
      lastReport = now;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function stopNodes(nodes: readonly GovernorProcess[]): Promise<void> {
  await Promise.all(
    nodes.map(async (n) => {
      if (n.child.exitCode !== null || n.child.signalCode !== null) return;
      n.child.kill('SIGTERM');
      const timer = setTimeout(() => n.child.kill('SIGKILL'), 60_000);
      await n.exited;
      clearTimeout(timer);
    }),
  );
}

function pct(ms: number, wallMs: number): string {
  return ((ms / wallMs) * 100).toFixed(0);
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}
