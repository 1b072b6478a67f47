import { runningAllocator } from '../allocator.ts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GovernorConfig, quantileContOfSorted } from '@governor/conventions';
import { createHopClassifier, decodeTraceRequestProtobuf, normalizeTraceRequest } from '@governor/otlp';
import { measureAppendRate } from '@governor/store';
import { type RunningGovernor, startGovernor } from '../start-governor.ts';
import { createBatchSource } from './create-batch-source.ts';
import { IDLE_SOCKET_TIMEOUT_MS } from './soak-run.ts';
import {
  type GovernorProcess,
  type ThreadCpu,
  readProcessCpu,
  spawnGovernorProcess,
} from './spawn-governor-process.ts';

// `governor bench ingest`: OTLP/HTTP protobuf end to end (ack after commit) against the raw DuckDB
// Appender rate on rows of the same width, measured in the same run.

export type ServerMode = 'process' | 'in-process' | 'url';

export interface IngestBenchOptions {
  mode: ServerMode;
  /** Required for mode 'url'. */
  url?: string;
  spans: number;
  clients: number;
  batch: number;
  /** Server checkpoint interval (modes process and in-process). */
  checkpointIntervalS: number;
  /** Spans appended for the raw Appender measurement. */
  rawSpans: number;
  /** Server decode workers (GOVERNOR_DECODE_WORKERS); undefined keeps the server's default. */
  decodeWorkers?: number;
  /** Start the server with the control loop off (control.enabled: false), to measure ingest alone. */
  ingestOnly?: boolean;
  onProgress: (line: string) => void;
}

export interface IngestBenchResult {
  mode: ServerMode;
  spansSent: number;
  spansAcked: number;
  requests: number;
  retries: number;
  elapsedS: number;
  ackedSpansPerS: number;
  /** The raw row-Appender rate: the faster of its runs before and after the server's (the ratio's reference). */
  rawAppendRowsPerS: number;
  /**
   * The raw row-Appender rate measured before the server ran and after it stopped: a machine whose
   * speed changed during the run (another tenant, a throttled CPU) shows as a gap between the two.
   */
  rawAppendRuns: { before: number; after: number | null };
  /**
   * The malloc of the process measuring the raw reference and of the server: jemalloc cuts the
   * Appender's cost by about a fifth, so a ratio across two allocators is not a like-for-like one.
   * `pnpm governor bench ingest` runs both on jemalloc when it is installed.
   */
  allocators: { reference: string; server: string | null };
  ratio: number;
  decodeNormalizeSpansPerS: number;
  ackP50Ms: number;
  ackP99Ms: number;
  ackMaxMs: number;
  /** Peak RSS of the server process (mode process), of this process (in-process), null for url. */
  serverPeakRssBytes: number | null;
  spansPerBatch: number;
  clients: number;
  /**
   * Main-thread CPU per row/span (Linux, server in a child process): the Appender's µs per row in
   * the raw run against the server main thread's µs per acknowledged span. Unlike wall-clock rates
   * these do not move with other processes' load; `cpuRatio` is the ratio the main thread alone
   * would allow with a core to itself.
   */
  cpu: {
    rawMainThreadUsPerRow: number;
    serverMainThreadUsPerSpan: number;
    serverProcessUsPerSpan: number;
    serverMainThreadWaitingS: number;
    cpuRatio: number;
  } | null;
  /** From the server's /metrics after the run, when it exposes them. */
  server: { checkpoints: number; maxCheckpointS: number; flushes: number; maxFlushS: number } | null;
  /** The raw reference as DataChunk appends on the same rows (laid out as columns, then appendDataChunk per 2,048). */
  rawChunkAppendRowsPerS: number;
  /** CPU of the appending thread per row in the raw runs: row Appender, DataChunk. */
  rawCpuUsPerRow: { row: number; chunk: number };
  /**
   * CPU µs per acknowledged span of each ingest stage over the timed run, from the server's
   * governor_ingest_stage_cpu_seconds_total (null when the server does not expose it), and of the
   * thread groups (main, decode_workers, other).
   */
  stages: { stageUsPerSpan: Record<string, number>; threadUsPerSpan: Record<string, number> } | null;
  /**
   * Seconds from the last acknowledgement until the request rollup had read every span (the stage
   * counters are read then); null when that could not be seen (no /api/sql, or not within 3 min).
   */
  rollupCatchUpS: number | null;
}

export async function runIngestBench(options: IngestBenchOptions): Promise<IngestBenchResult> {
  const log = options.onProgress;
  const runNonce = Math.floor(Math.random() * 0xffffffff);
  const source = createBatchSource(options.batch, runNonce);
  const batches = Math.max(1, Math.ceil(options.spans / source.spansPerBatch));

  // 1. The same spans, decoded and normalized once, for the single-thread figures.
  const classifier = createHopClassifier();
  const rows = [];
  let decodeStarted = performance.now();
  for (const template of source.templates) {
    rows.push(
      ...normalizeTraceRequest(decodeTraceRequestProtobuf(template), { classifier, aliases: {} }).rows,
    );
  }
  decodeStarted = performance.now();
  let decoded = 0;
  for (let round = 0; round < 3; round++) {
    for (const template of source.templates) {
      decoded += normalizeTraceRequest(decodeTraceRequestProtobuf(template), { classifier, aliases: {} }).rows
        .length;
    }
  }
  const decodeNormalizeSpansPerS = (decoded / (performance.now() - decodeStarted)) * 1000;
  log(`decode+normalize on one thread: ${fmt(decodeNormalizeSpansPerS)} spans/s`);

  // 2. The raw Appender rate on those rows, in a fresh database, before the server starts.
  const rawDir = mkdtempSync(join(tmpdir(), 'governor-bench-raw-'));
  log(
    `raw DuckDB Appender: appending ${fmt(options.rawSpans)} rows (${rows.length} distinct) into a fresh database…`,
  );
  const rawCpuBefore = readProcessCpu('self');
  const raw = await measureAppendRate({ dir: rawDir, rows, count: options.rawSpans, flushEvery: 100_000 });
  const rawCpuAfter = readProcessCpu('self');
  log(`raw DuckDB Appender: ${fmt(raw.rowsPerS)} rows/s, ${raw.cpuUsPerRow.toFixed(1)} µs CPU/row`);
  const rawChunk = await measureAppendRate({
    dir: rawDir,
    rows,
    count: options.rawSpans,
    flushEvery: 100_000,
    method: 'chunk',
  });
  log(
    `raw DuckDB DataChunk append: ${fmt(rawChunk.rowsPerS)} rows/s, ${rawChunk.cpuUsPerRow.toFixed(1)} µs CPU/row`,
  );

  // 3. The server.
  let dataDir: string | null = null;
  let child: GovernorProcess | null = null;
  let inProcess: RunningGovernor | null = null;
  let url = options.url ?? '';
  if (options.mode !== 'url') {
    dataDir = mkdtempSync(join(tmpdir(), 'governor-bench-'));
    if (options.mode === 'process') {
      const configFile = join(dataDir, 'bench-config.yaml');
      const control = options.ingestOnly ? 'control:\n  enabled: false\n' : '';
      writeFileSync(
        configFile,
        `server:\n  checkpoint_interval_s: ${options.checkpointIntervalS}\n${control}`,
      );
      child = await spawnGovernorProcess({
        dataDir,
        args: ['--config', configFile],
        env:
          options.decodeWorkers === undefined
            ? {}
            : { GOVERNOR_DECODE_WORKERS: String(options.decodeWorkers) },
      });
      url = child.url;
      log(`server allocator: ${child.allocator()} (scripts/run-governor.sh; docs/operations.md, "Memory")`);
    } else {
      if (options.decodeWorkers !== undefined)
        process.env.GOVERNOR_DECODE_WORKERS = String(options.decodeWorkers);
      inProcess = await startGovernor({
        config: GovernorConfig.parse({
          server: {
            http_port: 0,
            grpc_port: 0,
            data_dir: dataDir,
            checkpoint_interval_s: options.checkpointIntervalS,
          },
          ...(options.ingestOnly ? { control: { enabled: false } } : {}),
        }),
        env: {},
      });
      url = inProcess.httpUrl;
    }
    log(`server (${options.mode}) up at ${url}, data in ${dataDir}`);
  }

  const memory = () =>
    child ? child.memory() : inProcess ? { rssBytes: process.memoryUsage.rss(), peakRssBytes: 0 } : null;
  let peakRss = 0;
  const sampleMemory = () => {
    const m = memory();
    if (m) peakRss = Math.max(peakRss, m.rssBytes, m.peakRssBytes);
    return m;
  };

  try {
    const target = new URL('/v1/traces', url);
    const agent = new Agent({
      keepAlive: true,
      maxSockets: options.clients,
      timeout: IDLE_SOCKET_TIMEOUT_MS,
    });
    const token = process.env.GOVERNOR_TOKEN;
    const send = (body: Buffer) => postProtobuf(target, agent, token, body);

    // Warm-up (JIT, connections, appenders), not counted.
    const warmup = Math.min(options.clients * 4, 40);
    await Promise.all(Array.from({ length: warmup }, (_, i) => send(source.batch(batches + i))));

    // Rollups of the warm-up spans done first, so the stage window holds the timed spans' work only.
    await waitForRollup(url, token, 180_000);
    const stagesBefore = await readStageCpu(url, token);
    let next = 0;
    let acked = 0;
    let requests = 0;
    let retries = 0;
    const latencies: number[] = [];
    const started = performance.now();
    const serverCpuBefore = child?.cpu() ?? null;
    const progress = setInterval(() => {
      const elapsed = (performance.now() - started) / 1000;
      const m = sampleMemory();
      log(
        `  ${fmt(acked)}/${fmt(batches * source.spansPerBatch)} spans acked, ${fmt(acked / elapsed)} spans/s` +
          (m ? `, server RSS ${(m.rssBytes / 2 ** 20).toFixed(0)} MiB` : ''),
      );
    }, 1000);
    const client = async () => {
      for (let index = next++; index < batches; index = next++) {
        const body = source.batch(index);
        for (;;) {
          const sent = performance.now();
          const { status, retryAfterS } = await send(body);
          latencies.push(performance.now() - sent);
          requests++;
          if (status === 200) break;
          if (status === 429 || status === 503) {
            retries++;
            await new Promise((resolve) => setTimeout(resolve, Math.min(1000, retryAfterS * 1000)));
            continue;
          }
          throw new Error(`the server answered ${status} to batch ${index}`);
        }
        acked += source.spansPerBatch;
      }
    };
    try {
      await Promise.all(Array.from({ length: options.clients }, client));
    } finally {
      clearInterval(progress);
      agent.destroy();
    }
    const elapsedS = (performance.now() - started) / 1000;
    sampleMemory();
    const serverCpuAfter = child?.cpu() ?? null;
    // Before anything else asks /metrics: a scrape computes the signals (and so refreshes the
    // rollups), which is not ingest's work. Taken at the start of the scrape, so the before-scrape's
    // own signals work over the warm-up spans falls inside the window (the rollups need it anyway).
    // The stage figures are complete once the rollups have caught up with the acknowledged spans.
    const rollupCatchUpS = await waitForRollup(url, token, 180_000);
    const stagesAfter = await readStageCpu(url, token);
    const server = await readServerMetrics(url, token);
    const serverAllocator = child?.allocator() ?? (inProcess ? runningAllocator() : null);
    // The reference once more, the server stopped (a process of its own) so nothing competes.
    if (child) {
      child.child.kill('SIGTERM');
      await child.exited;
    }
    const rawAfterRun =
      options.mode === 'in-process'
        ? null
        : await measureAppendRate({ dir: rawDir, rows, count: options.rawSpans, flushEvery: 100_000 });
    if (rawAfterRun) log(`raw DuckDB Appender after the server stopped: ${fmt(rawAfterRun.rowsPerS)} rows/s`);
    const rawRowsPerS = Math.max(raw.rowsPerS, rawAfterRun?.rowsPerS ?? 0);
    const cpu = cpuFigures(
      rawCpuBefore,
      rawCpuAfter,
      options.rawSpans,
      serverCpuBefore,
      serverCpuAfter,
      acked,
    );
    latencies.sort((a, b) => a - b);
    const q = (p: number) => (latencies.length === 0 ? 0 : quantileContOfSorted(latencies, p));
    const ackedSpansPerS = acked / elapsedS;
    return {
      mode: options.mode,
      spansSent: batches * source.spansPerBatch,
      spansAcked: acked,
      requests,
      retries,
      elapsedS,
      ackedSpansPerS,
      rawAppendRowsPerS: rawRowsPerS,
      rawAppendRuns: { before: raw.rowsPerS, after: rawAfterRun?.rowsPerS ?? null },
      allocators: { reference: runningAllocator(), server: serverAllocator },
      ratio: ackedSpansPerS / rawRowsPerS,
      decodeNormalizeSpansPerS,
      ackP50Ms: q(0.5),
      ackP99Ms: q(0.99),
      ackMaxMs: latencies.at(-1) ?? 0,
      serverPeakRssBytes: options.mode === 'url' ? null : peakRss,
      spansPerBatch: source.spansPerBatch,
      clients: options.clients,
      cpu,
      server,
      rawChunkAppendRowsPerS: rawChunk.rowsPerS,
      rawCpuUsPerRow: { row: raw.cpuUsPerRow, chunk: rawChunk.cpuUsPerRow },
      stages: stageFigures(stagesBefore, stagesAfter, acked),
      rollupCatchUpS,
    };
  } finally {
    if (child) {
      child.child.kill('SIGTERM');
      await child.exited;
    }
    await inProcess?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

function cpuFigures(
  rawBefore: ThreadCpu | null,
  rawAfter: ThreadCpu | null,
  rawRows: number,
  serverBefore: ThreadCpu | null,
  serverAfter: ThreadCpu | null,
  spans: number,
): IngestBenchResult['cpu'] {
  if (!rawBefore || !rawAfter || !serverBefore || !serverAfter || spans === 0) return null;
  const rawMainThreadUsPerRow = ((rawAfter.mainThreadOnCpuMs - rawBefore.mainThreadOnCpuMs) * 1000) / rawRows;
  const serverMainThreadUsPerSpan =
    ((serverAfter.mainThreadOnCpuMs - serverBefore.mainThreadOnCpuMs) * 1000) / spans;
  return {
    rawMainThreadUsPerRow,
    serverMainThreadUsPerSpan,
    serverProcessUsPerSpan: ((serverAfter.processCpuMs - serverBefore.processCpuMs) * 1000) / spans,
    serverMainThreadWaitingS: (serverAfter.mainThreadWaitingMs - serverBefore.mainThreadWaitingMs) / 1000,
    cpuRatio: rawMainThreadUsPerRow / serverMainThreadUsPerSpan,
  };
}

/** Checkpoint and flush figures from Governor's own /metrics (Prometheus text). */
async function readServerMetrics(
  url: string,
  token: string | undefined,
): Promise<IngestBenchResult['server']> {
  try {
    const response = await fetch(new URL('/metrics', url), {
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    if (!response.ok) return null;
    const text = await response.text();
    // The first of the names that the server exposes (the metric names are still settling).
    const value = (...names: string[]) => {
      for (const name of names) {
        const match = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
        if (match) return Number(match[1]);
      }
      return Number.NaN;
    };
    return {
      checkpoints: value('governor_writer_checkpoints_total', 'governor_checkpoints_total'),
      maxCheckpointS: value(
        'governor_writer_max_checkpoint_seconds',
        'governor_checkpoint_max_seconds',
        'governor_writer_last_checkpoint_seconds',
      ),
      flushes: value('governor_writer_flushes_total', 'governor_write_flushes_total'),
      maxFlushS: value('governor_writer_max_flush_seconds', 'governor_write_flush_max_seconds'),
    };
  } catch {
    return null;
  }
}

interface StageCpu {
  stages: Record<string, number>;
  threads: Record<string, number>;
}

/** The server's CPU seconds per ingest stage and thread group (null when it has no such counters). */
async function readStageCpu(url: string, token: string | undefined): Promise<StageCpu | null> {
  try {
    const response = await fetch(new URL('/metrics', url), {
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    if (!response.ok) return null;
    const text = await response.text();
    const read = (family: string, label: string) => {
      const values: Record<string, number> = {};
      const pattern = new RegExp(`^${family}\\{${label}="([^"]+)"\\} (\\S+)$`, 'gm');
      for (const match of text.matchAll(pattern)) values[match[1]!] = Number(match[2]);
      return values;
    };
    const stages = read('governor_ingest_stage_cpu_seconds_total', 'stage');
    if (Object.keys(stages).length === 0) return null;
    return { stages, threads: read('governor_ingest_thread_cpu_seconds_total', 'threads') };
  } catch {
    return null;
  }
}

/** Waits until request_facts_state has reached span_store's newest row (via /api/sql); the seconds it took. */
export async function waitForRollup(
  url: string,
  token: string | undefined,
  timeoutMs: number,
): Promise<number | null> {
  const started = performance.now();
  const sql = `SELECT (SELECT last_rowid FROM request_facts_state WHERE id = 1) >= (SELECT max(rowid) FROM span_store) AS caught_up`;
  while (performance.now() - started < timeoutMs) {
    try {
      const response = await fetch(new URL('/api/sql', url), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify({ sql }),
      });
      if (!response.ok) return null;
      const body = (await response.json()) as { rows?: unknown[][] };
      if (body.rows?.[0]?.[0] === true) return (performance.now() - started) / 1000;
    } catch {
      return null;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return null;
}

function stageFigures(
  before: StageCpu | null,
  after: StageCpu | null,
  spans: number,
): IngestBenchResult['stages'] {
  if (!before || !after || spans === 0) return null;
  const perSpan = (a: Record<string, number>, b: Record<string, number>) =>
    Object.fromEntries(Object.entries(a).map(([k, v]) => [k, ((v - (b[k] ?? 0)) * 1e6) / spans]));
  return {
    stageUsPerSpan: perSpan(after.stages, before.stages),
    threadUsPerSpan: perSpan(after.threads, before.threads),
  };
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** POSTs an OTLP/protobuf body: the status and the Retry-After (s, 1 when absent) it answered. */
export function postProtobuf(
  target: string | URL,
  agent: Agent,
  token: string | undefined,
  body: Buffer,
): Promise<{ status: number; retryAfterS: number }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      target,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/x-protobuf',
          'content-length': body.length,
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, retryAfterS: Number(res.headers['retry-after'] ?? 1) || 1 }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
