import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type GovernorConfig,
  type GroupDimension,
  parseGovernorConfig,
  quantileCont,
} from '@governor/conventions';
import { MAX_ARRIVALS_PER_POOL, createRequestArrivalsReader } from '@governor/control';
import { type Signals, createSignals } from '@governor/signals';
import { MAIN_FILE, STORE_FILES, createStore } from '@governor/store';
import { BENCH_POOLS, BENCH_PRICES, createFleetTraffic } from './generate-fleet-spans.ts';

// `governor bench signals`: builds a store of synthetic fleet traffic (20M spans by default) and
// times the full signals snapshot (all groups, 5-minute window, several groupings) — from the
// incrementally maintained rollup (request_facts) and from a raw scan of spans — then the rollup's
// upkeep on a copy of the store (so it cannot disturb the snapshot figures or a kept store).
// Prints figures; asserts nothing (benchmarks, not timed tests).

export interface SignalsBenchOptions {
  spans: number;
  /** Event-time span of the generated traffic. */
  hours: number;
  runs: number;
  rawRuns: number;
  /** Reuse (or keep) this store instead of a temporary one. */
  dataDir?: string;
  log: (line: string) => void;
}

export const CHUNK_SPANS = 100_000;
const REFRESH_EVERY_SPANS = 1_000_000;
export const WINDOW_MS = 5 * 60_000;
/**
 * A server's reads give up after 30 s (DEFAULT_READ_DEADLINE_MS); the raw scan of 20M spans takes
 * minutes on 2 cores, and a benchmark wants its figure, not the server's deadline.
 */
export const BENCH_READ_DEADLINE_MS = 60 * 60_000;

/** The groupings each snapshot benchmark times (both engines). */
export const SNAPSHOT_SHAPES: readonly { label: string; by: GroupDimension[] }[] = [
  { label: 'by pool', by: ['pool'] },
  { label: 'fleet (no grouping)', by: [] },
  { label: 'by pool, model', by: ['pool', 'model'] },
  { label: 'by tenant', by: ['tenant'] },
  { label: 'by workflow_type, priority', by: ['workflow_type', 'priority'] },
];

export async function runSignalsBench(options: SignalsBenchOptions): Promise<void> {
  const log = options.log;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'governor-bench-signals-'));
  const temporary = options.dataDir === undefined;
  const reuse = !temporary && existsSync(join(dataDir, MAIN_FILE));
  const config = benchConfig(dataDir);
  const store = await createStore({
    dataDir,
    memoryLimit: '6GB',
    threads: 2,
    checkpointIntervalMs: 60_000,
    readDeadlineMs: BENCH_READ_DEADLINE_MS,
  });
  try {
    const rollup = createSignals(store, config);
    const raw = createSignals(store, config, { source: 'raw' });
    const [existing] = await store.query<{ n: number }>('SELECT count(*) AS n FROM span_store');
    if (reuse && (existing?.n ?? 0) > 0) {
      log(`reusing ${dataDir}: ${existing!.n.toLocaleString('en-US')} spans`);
      await rollup.refresh();
    } else {
      await buildStore(store, rollup, options);
    }
    await store.writer.checkpoint();
    // The checkpoint moves spans staged during it into span_store: apply them before counting.
    await rollup.refresh();

    const [size] = await store.query<Record<string, number | undefined>>(
      'SELECT (SELECT count(*) FROM span_store) AS spans, (SELECT count(*) FROM request_facts) AS requests, (SELECT count(*) FROM metric_store) AS points',
    );
    const watermark = await rollup.watermarkNs();
    const [inWindow] = await store.query<Record<string, number | undefined>>(
      'SELECT count(*) AS requests, sum(span_count) AS spans FROM request_facts WHERE end_ns > $from AND end_ns <= $to',
      { from: watermark! - BigInt(WINDOW_MS) * 1_000_000n, to: watermark! },
    );
    log('');
    log(
      `store: ${fmt(size?.spans)} spans, ${fmt(size?.requests)} requests, ${fmt(size?.points)} metric points; ` +
        `5-minute window at the watermark: ${fmt(inWindow?.requests)} requests, ${fmt(inWindow?.spans)} spans`,
    );

    const shapes = SNAPSHOT_SHAPES;
    log('');
    log(
      `full snapshot, 5-minute window at the watermark, ms (CPU: process CPU time per snapshot, all threads; ` +
        `load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores):`,
    );
    log('  source  grouping                      groups  wall p50  wall p95  wall max   CPU p50');
    const row = (source: string, label: string, t: Awaited<ReturnType<typeof timeSnapshots>>) =>
      log(
        `  ${source.padEnd(6)}  ${label.padEnd(28)}  ${String(t.groups).padStart(6)}  ${t.p50.padStart(8)}  ` +
          `${t.p95.padStart(8)}  ${t.max.padStart(8)}  ${t.cpuP50.padStart(8)}`,
      );
    for (const shape of shapes)
      row('rollup', shape.label, await timeSnapshots(rollup, shape.by, options.runs));
    log(
      `  (raw: 1 untimed and ${options.rawRuns} timed full scans of spans — minutes each over 20M spans on 2 cores…)`,
    );
    row('raw', 'by pool', await timeSnapshots(raw, ['pool'], options.rawRuns));
    // The control loop's other per-tick read: each pool's last requests, which a scale-in replays.
    const readArrivals = createRequestArrivalsReader(store);
    const atNs = watermark!;
    row(
      'rollup',
      `requests to replay (≤ ${MAX_ARRIVALS_PER_POOL.toLocaleString('en-US')}/pool)`,
      await timeRuns(async () => (await readArrivals(atNs, WINDOW_MS)).size, options.runs),
    );
  } finally {
    await store.close();
  }
  try {
    await measureUpkeep(dataDir, config, options);
  } finally {
    if (temporary) rmSync(dataDir, { recursive: true, force: true });
  }
}

export const UPKEEP_WARMUP = 2;
export const UPKEEP_RUNS = 10;

/**
 * Steady-state rollup upkeep: one refresh after each ~1 s of traffic at the generated rate,
 * appended strictly after the newest event. It runs on a copy of the store, after the snapshots
 * were timed, so the appended traffic moves neither the watermark the snapshots were measured at
 * nor the contents of a kept (--data-dir) store that a later run reuses.
 */
async function measureUpkeep(dataDir: string, config: GovernorConfig, options: SignalsBenchOptions) {
  const log = options.log;
  const copyDir = mkdtempSync(join(tmpdir(), 'governor-bench-upkeep-'));
  const copyStarted = performance.now();
  for (const name of readdirSync(dataDir)) {
    if (STORE_FILES.some((file) => name.startsWith(file)))
      copyFileSync(join(dataDir, name), join(copyDir, name));
  }
  const copyS = (performance.now() - copyStarted) / 1000;
  const store = await createStore({
    dataDir: copyDir,
    memoryLimit: '6GB',
    threads: 2,
    checkpointIntervalMs: 60_000,
  });
  try {
    const rollup = createSignals(store, config);
    await rollup.refresh();
    const newest = await rollup.newestEventNs();
    const traffic = createFleetTraffic({
      startNs: newest! + 1_000_000_000n,
      requestsPerS: requestRate(options),
      seed: 99,
    });
    const oneSecond = Math.round(options.spans / (options.hours * 3600));
    const upkeep: number[] = [];
    const traces: number[] = [];
    for (let i = 0; i < UPKEEP_WARMUP + UPKEEP_RUNS; i++) {
      const chunk = traffic.next(oneSecond);
      await store.writer.write(chunk.spans, chunk.metrics);
      const refreshed = await rollup.refresh();
      if (i < UPKEEP_WARMUP) continue;
      upkeep.push(refreshed!.elapsedMs);
      traces.push(refreshed!.tracesTouched);
    }
    log('');
    log(
      `rollup upkeep (on a copy of the store made in ${copyS.toFixed(0)} s, after the snapshots; traffic appended after the ` +
        `newest event; ${UPKEEP_WARMUP} untimed refreshes first): one refresh per ~1 s of traffic ` +
        `(${fmt(oneSecond)} spans, ~${fmt(percentile(traces, 0.5))} traces) over ${UPKEEP_RUNS} runs: ` +
        `p50 ${percentile(upkeep, 0.5).toFixed(0)} ms, max ${Math.max(...upkeep).toFixed(0)} ms`,
    );
  } finally {
    await store.close();
    rmSync(copyDir, { recursive: true, force: true });
  }
}

export function requestRate(options: Pick<SignalsBenchOptions, 'spans' | 'hours'>): number {
  // ≈6.5 spans per request, plus retries.
  return options.spans / 6.6 / (options.hours * 3600);
}

async function buildStore(
  store: Awaited<ReturnType<typeof createStore>>,
  signals: Signals,
  options: SignalsBenchOptions,
): Promise<void> {
  const log = options.log;
  const startNs = BigInt(Date.UTC(2026, 0, 1)) * 1_000_000n;
  const traffic = createFleetTraffic({ startNs, requestsPerS: requestRate(options), seed: 7 });
  log(
    `building ${fmt(options.spans)} spans over ${options.hours} h of event time (${requestRate(options).toFixed(0)} requests/s), ` +
      `refreshing the rollup every ${fmt(REFRESH_EVERY_SPANS)} spans as ingest would`,
  );
  const started = performance.now();
  let written = 0;
  let sinceRefresh = 0;
  let refreshMs = 0;
  while (written < options.spans) {
    const chunk = traffic.next(Math.min(CHUNK_SPANS, options.spans - written));
    await store.writer.write(chunk.spans, chunk.metrics);
    written += chunk.spans.length;
    sinceRefresh += chunk.spans.length;
    if (sinceRefresh >= REFRESH_EVERY_SPANS || written >= options.spans) {
      const r = await signals.refresh();
      refreshMs += r?.elapsedMs ?? 0;
      sinceRefresh = 0;
      const s = (performance.now() - started) / 1000;
      log(
        `  ${fmt(written).padStart(12)} spans  ${(written / s / 1000).toFixed(0).padStart(4)}k spans/s overall  ` +
          `rollup refresh ${(r?.elapsedMs ?? 0).toFixed(0)} ms for ${fmt(r?.tracesTouched ?? 0)} traces`,
      );
    }
  }
  const total = (performance.now() - started) / 1000;
  log(
    `built in ${total.toFixed(0)} s; rollup maintenance ${(refreshMs / 1000).toFixed(0)} s of it ` +
      `(${(written / (refreshMs / 1000) / 1000).toFixed(0)}k spans/s)`,
  );
}

async function timeSnapshots(signals: Signals, by: GroupDimension[], runs: number) {
  return timeRuns(async () => (await signals.snapshot({ windowMs: WINDOW_MS, by })).groups.length, runs);
}

/** Times `run` (which returns the groups it produced) `runs` times, after one untimed warm-up run. */
async function timeRuns(run: () => Promise<number>, runs: number) {
  const times: number[] = [];
  const cpu: number[] = [];
  // One untimed run warms caches (learned peaks, DuckDB buffers).
  let groups = await run();
  for (let i = 0; i < runs; i++) {
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    groups = await run();
    times.push(performance.now() - started);
    const used = process.cpuUsage(cpuBefore);
    cpu.push((used.user + used.system) / 1000);
  }
  return {
    groups,
    p50: percentile(times, 0.5).toFixed(1),
    p95: percentile(times, 0.95).toFixed(1),
    max: Math.max(...times).toFixed(1),
    cpuP50: percentile(cpu, 0.5).toFixed(1),
  };
}

export function percentile(values: readonly number[], q: number): number {
  return values.length === 0 ? 0 : quantileCont(values, q);
}

function fmt(n: number | undefined): string {
  return Math.round(n ?? 0).toLocaleString('en-US');
}

export function benchConfig(dataDir: string): GovernorConfig {
  const parsed = parseGovernorConfig({
    server: { data_dir: dataDir },
    pricing: { gpu_hour_usd: BENCH_PRICES },
    pools: BENCH_POOLS.map((p) => ({
      name: p.name,
      gpu_type: p.gpuType,
      gpus_per_replica: p.gpusPerReplica,
      model: p.model,
      region: p.region,
      peak_tokens_per_s_per_replica: Math.round(1000 / p.itlMs) * 64,
    })),
    slo: { ttft_ms: 1000, e2e_ms: 20_000 },
  });
  if (!parsed.ok) throw new Error(`bench config: ${JSON.stringify(parsed.issues)}`);
  return parsed.config;
}
