import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClickHouseStoreConfig, type GroupDimension } from '@governor/conventions';
import { MAX_ARRIVALS_PER_POOL, createRequestArrivalsReader } from '@governor/control';
import {
  type ClickHouseRollupLoop,
  type Signals,
  createClickHouseRollup,
  createSignals,
  startClickHouseRollupLoop,
} from '@governor/signals';
import { type ClickHouseStore, openClickHouseStore } from '@governor/store';
import { type ClickHouseCluster, startClickHouseCluster } from '@governor/store/testing';
import {
  BENCH_READ_DEADLINE_MS,
  CHUNK_SPANS,
  SNAPSHOT_SHAPES,
  UPKEEP_RUNS,
  UPKEEP_WARMUP,
  WINDOW_MS,
  benchConfig,
  percentile,
  requestRate,
} from './bench-signals.ts';
import { createFleetTraffic } from './generate-fleet-spans.ts';
import { machineBusyCpuMs, processCpuMs, requireServers } from './scale-out-engines.ts';

// `governor bench signals --engine clickhouse`: the snapshot benchmark of `bench signals` over a
// ClickHouse store (a two-shard cluster of clickhouse-server processes on loopback, started with
// the test helpers). The same synthetic fleet traffic is written through the ClickHouse writer in
// 100k-span batches (not through Governor), each batch rolled up into request_facts by a node's
// rollup (createClickHouseRollup over the store's rollupIo, the rollup loop the node runs) while
// the next batch is written; the loading rate is printed. Then the full snapshot is timed per
// grouping as the DuckDB benchmark times it (5-minute window at the watermark), with the CPU of
// this process (Node) and of the ClickHouse servers, and the rollup's upkeep per second of traffic.
// No raw-scan figures: the raw source (facts recomputed from spans per read) is DuckDB's only.

export interface ClickHouseSignalsBenchOptions {
  spans: number;
  hours: number;
  runs: number;
  shards: number;
  log: (line: string) => void;
}

/** A batch rolled up per call: larger calls cost less per span (docs/scale-out-design.md). */
const ROLLUP_EVERY_SPANS = CHUNK_SPANS;

export async function runClickHouseSignalsBench(options: ClickHouseSignalsBenchOptions): Promise<void> {
  requireServers({ clickhouse: true, postgres: false }, 'governor bench signals --engine clickhouse');
  const log = options.log;
  const dir = mkdtempSync(join(tmpdir(), 'governor-bench-signals-ch-'));
  const config = benchConfig(dir);
  let cluster: ClickHouseCluster | null = null;
  let store: ClickHouseStore | null = null;
  let loop: ClickHouseRollupLoop | null = null;
  let rollup: ReturnType<typeof createClickHouseRollup> | null = null;
  try {
    const started = performance.now();
    cluster = await startClickHouseCluster({ shards: options.shards });
    store = await openClickHouseStore({
      config: ClickHouseStoreConfig.parse({
        url: cluster.shards[0]!.url,
        shard_urls: cluster.shards.map((s) => s.url),
      }),
      env: {},
      readDeadlineMs: BENCH_READ_DEADLINE_MS,
      maxQueuedRows: Number.MAX_SAFE_INTEGER,
    });
    const pids = cluster.shards.map((s) => s.pid);
    log(
      `engine: clickhouse — ${options.shards} clickhouse-server shards on loopback (pids ${pids.join(', ')}), ` +
        `up with Governor's tables in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    rollup = createClickHouseRollup(store.rollupIo, config);
    // The node's loop, run by hand here (flush after each batch): its interval never fires.
    loop = startClickHouseRollupLoop(rollup, {
      intervalMs: 24 * 3600_000,
      onError: (error) => log(`rollup failed: ${error.message}`),
    });
    const signals = createSignals({ engine: 'clickhouse', reader: store.reader, rollup: loop }, config);
    await load(store, loop, pids, options);

    const count = async (sql: string) =>
      Number((await store!.reader.query<{ n: string | number }>(sql))[0]?.n ?? 0);
    const spans = await count('SELECT count() AS n FROM {{database}}.span_store');
    const requests = await count(
      'SELECT count() AS n FROM {{database}}.request_facts FINAL WHERE deleted = 0',
    );
    const points = await count('SELECT count() AS n FROM {{database}}.metric_store');
    const watermark = await signals.watermarkNs();
    if (watermark === null) throw new Error('the store holds no events');
    const [inWindow] = await store.reader.query<Record<string, string | number>>(
      'SELECT count() AS requests, sum(span_count) AS spans FROM {{database}}.request_facts FINAL WHERE deleted = 0 AND end_ns > $from AND end_ns <= $to',
      { from: watermark - BigInt(WINDOW_MS) * 1_000_000n, to: watermark },
    );
    log('');
    log(
      `store (ClickHouse): ${fmt(spans)} spans, ${fmt(requests)} requests, ${fmt(points)} metric points; ` +
        `5-minute window at the watermark: ${fmt(Number(inWindow?.requests ?? 0))} requests, ${fmt(Number(inWindow?.spans ?? 0))} spans`,
    );
    log('');
    log(
      `full snapshot on ClickHouse, 5-minute window at the watermark, ms (CPU: Node = this process, all threads; ` +
        `ClickHouse = the ${options.shards} servers, 10 ms ticks; load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores):`,
    );
    log(
      '  engine      grouping                      groups  wall p50  wall p95  wall max  Node CPU p50  ClickHouse CPU p50',
    );
    const row = (label: string, t: Timed) =>
      log(
        `  clickhouse  ${label.padEnd(28)}  ${String(t.groups).padStart(6)}  ${t.p50.padStart(8)}  ` +
          `${t.p95.padStart(8)}  ${t.max.padStart(8)}  ${t.cpuP50.padStart(12)}  ${t.clickhouseCpuP50.padStart(18)}`,
      );
    const busy = cpuMark(pids);
    for (const shape of SNAPSHOT_SHAPES)
      row(shape.label, await timeSnapshots(signals, shape.by, options.runs, pids));
    const readArrivals = createRequestArrivalsReader(store.reader);
    row(
      `requests to replay (≤ ${MAX_ARRIVALS_PER_POOL.toLocaleString('en-US')}/pool)`,
      await timeRuns(async () => (await readArrivals(watermark, WINDOW_MS)).size, options.runs, pids),
    );
    log(`  over these reads: ${describeCpu(busy, cpuMark(pids))}`);
    await measureUpkeep(store, loop, signals, options);
  } finally {
    await loop?.stop();
    await rollup?.close();
    await store?.close();
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Writes the traffic in CHUNK_SPANS batches through the ClickHouse writer; each batch is rolled up
 * while the next one is written (the rollup reads back only what was acknowledged before it).
 */
async function load(
  store: ClickHouseStore,
  loop: ClickHouseRollupLoop,
  pids: readonly number[],
  options: ClickHouseSignalsBenchOptions,
): Promise<void> {
  const log = options.log;
  const startNs = BigInt(Date.UTC(2026, 0, 1)) * 1_000_000n;
  const traffic = createFleetTraffic({ startNs, requestsPerS: requestRate(options), seed: 7 });
  log(
    `loading ${fmt(options.spans)} spans over ${options.hours} h of event time (${requestRate(options).toFixed(0)} requests/s) ` +
      `through the ClickHouse writer in ${fmt(CHUNK_SPANS)}-span batches, each rolled up into request_facts ` +
      '(createClickHouseRollup, as a node) while the next one is written',
  );
  const started = performance.now();
  const busy = cpuMark(pids);
  const cpu0 = process.cpuUsage();
  const ch0 = pids.reduce((a, p) => a + processCpuMs(p), 0);
  let written = 0;
  let writeMs = 0;
  let rollupMs = 0;
  let rolledUp = 0;
  let lastReport = started;
  let pending: Promise<void> = Promise.resolve();
  const reportEvery = Math.max(500_000, Math.round(options.spans / 40));
  let nextReport = reportEvery;
  const rollUp = async () => {
    const t = performance.now();
    const spans = loop.pending().spans;
    const done = await loop.flush();
    if (done === null && spans > 0) throw new Error('the rollup failed (see the error above)');
    rollupMs += performance.now() - t;
    rolledUp += spans;
  };
  while (written < options.spans) {
    const chunk = traffic.next(Math.min(CHUNK_SPANS, options.spans - written));
    const t = performance.now();
    await store.writer.write(chunk.spans, chunk.metrics);
    writeMs += performance.now() - t;
    written += chunk.spans.length;
    await pending;
    loop.add(chunk.spans);
    if (loop.pending().spans >= ROLLUP_EVERY_SPANS || written >= options.spans) pending = rollUp();
    const now = performance.now();
    if (written >= nextReport || now - lastReport > 30_000) {
      nextReport = written + reportEvery;
      lastReport = now;
      const s = (now - started) / 1000;
      const chMs = pids.reduce((a, p) => a + processCpuMs(p), 0) - ch0;
      const cpu = process.cpuUsage(cpu0);
      log(
        `  ${fmt(written).padStart(12)} spans written, ${fmt(rolledUp).padStart(12)} rolled up  ` +
          `${fmt(rolledUp / s).padStart(7)} spans/s loaded  (insert ${fmt(written / (writeMs / 1000))} spans/s of its wall time, ` +
          `rollup ${fmt(rolledUp / (rollupMs / 1000 || 1))}; CPU Node ${(((cpu.user + cpu.system) / 1000 / (now - started)) * 100).toFixed(0)} %, ` +
          `ClickHouse ${((chMs / (now - started)) * 100).toFixed(0)} %)`,
      );
    }
  }
  await pending;
  const s = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const nodeCpuS = (cpu.user + cpu.system) / 1e6;
  const chCpuS = (pids.reduce((a, p) => a + processCpuMs(p), 0) - ch0) / 1000;
  log(
    `loaded in ${s.toFixed(0)} s: ${fmt(written / s)} spans/s written and rolled up; insert ${(writeMs / 1000).toFixed(0)} s ` +
      `(${fmt(written / (writeMs / 1000))} spans/s), rollup ${(rollupMs / 1000).toFixed(0)} s (${fmt(written / (rollupMs / 1000))} spans/s; ` +
      `the two overlap); CPU: Node ${nodeCpuS.toFixed(0)} s (${((nodeCpuS * 1e6) / written).toFixed(1)} µs/span: generator, ` +
      `JSON rows, the rollup's scratch DuckDB), ClickHouse servers ${chCpuS.toFixed(0)} s (${((chCpuS * 1e6) / written).toFixed(1)} µs/span)`,
  );
  log(`  over the load: ${describeCpu(busy, cpuMark(pids))}`);
}

interface CpuMark {
  atMs: number;
  selfMs: number;
  clickhouseMs: number;
  machineMs: number | null;
}

function cpuMark(pids: readonly number[]): CpuMark {
  const self = process.cpuUsage();
  return {
    atMs: performance.now(),
    selfMs: (self.user + self.system) / 1000,
    clickhouseMs: pids.reduce((a, p) => a + processCpuMs(p), 0),
    machineMs: machineBusyCpuMs(),
  };
}

/** Cores used by this process, the ClickHouse servers and the rest of the machine (other load). */
function describeCpu(from: CpuMark, to: CpuMark): string {
  const wall = to.atMs - from.atMs || 1;
  const self = to.selfMs - from.selfMs;
  const ch = to.clickhouseMs - from.clickhouseMs;
  const rest =
    to.machineMs === null || from.machineMs === null
      ? null
      : Math.max(0, to.machineMs - from.machineMs - self - ch);
  return (
    `cores used: this process ${(self / wall).toFixed(2)}, ClickHouse servers ${(ch / wall).toFixed(2)}` +
    (rest === null ? '' : `, rest of the machine ${(rest / wall).toFixed(2)} (other processes' load)`) +
    `, over ${(wall / 1000).toFixed(0)} s`
  );
}

/**
 * The rollup's steady-state upkeep, as the DuckDB benchmark measures it: one run per ~1 s of
 * traffic at the generated rate, appended after the newest event (after the snapshots were timed).
 */
async function measureUpkeep(
  store: ClickHouseStore,
  loop: ClickHouseRollupLoop,
  signals: Signals,
  options: ClickHouseSignalsBenchOptions,
): Promise<void> {
  const newest = await signals.newestEventNs();
  if (newest === null) return;
  const traffic = createFleetTraffic({
    startNs: newest + 1_000_000_000n,
    requestsPerS: requestRate(options),
    seed: 99,
  });
  const oneSecond = Math.round(options.spans / (options.hours * 3600));
  const upkeep: number[] = [];
  const traces: number[] = [];
  for (let i = 0; i < UPKEEP_WARMUP + UPKEEP_RUNS; i++) {
    const chunk = traffic.next(oneSecond);
    await store.writer.write(chunk.spans, chunk.metrics);
    loop.add(chunk.spans);
    const started = performance.now();
    const done = await loop.flush();
    if (i < UPKEEP_WARMUP || done === null) continue;
    upkeep.push(performance.now() - started);
    traces.push(done.traces);
  }
  options.log('');
  options.log(
    `rollup upkeep on ClickHouse (traffic appended after the newest event; ${UPKEEP_WARMUP} untimed runs first): ` +
      `one run per ~1 s of traffic (${fmt(oneSecond)} spans, ~${fmt(percentile(traces, 0.5))} traces) over ${upkeep.length} runs: ` +
      `p50 ${percentile(upkeep, 0.5).toFixed(0)} ms, max ${Math.max(...upkeep).toFixed(0)} ms`,
  );
}

interface Timed {
  groups: number;
  p50: string;
  p95: string;
  max: string;
  cpuP50: string;
  clickhouseCpuP50: string;
}

async function timeSnapshots(
  signals: Signals,
  by: GroupDimension[],
  runs: number,
  pids: readonly number[],
): Promise<Timed> {
  return timeRuns(
    async () => (await signals.snapshot({ windowMs: WINDOW_MS, by })).groups.length,
    runs,
    pids,
  );
}

/** Times `run` `runs` times after one untimed warm-up run: wall, this process's CPU, the servers'. */
async function timeRuns(run: () => Promise<number>, runs: number, pids: readonly number[]): Promise<Timed> {
  const times: number[] = [];
  const cpu: number[] = [];
  const chCpu: number[] = [];
  let groups = await run();
  const chMs = () => pids.reduce((a, p) => a + processCpuMs(p), 0);
  for (let i = 0; i < runs; i++) {
    const cpuBefore = process.cpuUsage();
    const chBefore = chMs();
    const started = performance.now();
    groups = await run();
    times.push(performance.now() - started);
    const used = process.cpuUsage(cpuBefore);
    cpu.push((used.user + used.system) / 1000);
    chCpu.push(chMs() - chBefore);
  }
  return {
    groups,
    p50: percentile(times, 0.5).toFixed(1),
    p95: percentile(times, 0.95).toFixed(1),
    max: Math.max(...times).toFixed(1),
    cpuP50: percentile(cpu, 0.5).toFixed(1),
    clickhouseCpuP50: percentile(chCpu, 0.5).toFixed(0),
  };
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}
