import { availableParallelism, loadavg } from 'node:os';
import { type IngestBenchResult, type ServerMode, runIngestBench } from '../bench/run-ingest-bench.ts';
import { runBenchIngestClusterCommand } from './bench-ingest-cluster-command.ts';
import { type ParsedArgs, UsageError, flagNumber, flagString } from './parse-args.ts';

export const BENCH_INGEST_USAGE =
  'governor bench ingest [--engine duckdb] [--url URL | --in-process] [--spans N] [--clients C] [--batch B] [--checkpoint-interval-s S] [--decode-workers N] [--ingest-only] [--raw-spans N] [--json]\n' +
  '       governor bench ingest --engine clickhouse [--nodes 2] [--shards 2] [--spans N] [--clients C] [--batch B] [--checkpoint-interval-s S] [--decode-workers N] [--ingest-only] [--rollup-timeout-s 900] [--json]\n' +
  '         (starts a ClickHouse cluster and PostgreSQL 15 on loopback, N nodes on store.engine: clickhouse, and one DuckDB node for comparison)';

/**
 * `governor bench ingest`: OTLP/HTTP protobuf ingest against a running Governor (--url), or one it
 * starts in a temp dir — a child process by default, `--in-process` to share this event loop.
 */
export async function runBenchIngestCommand(args: ParsedArgs): Promise<number> {
  const engine = flagString(args, 'engine') ?? 'duckdb';
  if (engine === 'clickhouse') return runBenchIngestClusterCommand(args);
  if (engine !== 'duckdb')
    throw new UsageError(`--engine is duckdb or clickhouse, not "${engine}"`, 'governor bench ingest --help');
  for (const flag of ['nodes', 'shards', 'rollup-timeout-s'])
    if (args.flags[flag] !== undefined)
      throw new UsageError(`--${flag} is for --engine clickhouse`, 'governor bench ingest --help');
  const url = flagString(args, 'url');
  const mode: ServerMode = url ? 'url' : args.flags['in-process'] === true ? 'in-process' : 'process';
  const spans = flagNumber(args, 'spans') ?? 600_000;
  const loadBefore = loadavg()[0]!;
  const result = await runIngestBench({
    mode,
    url,
    spans,
    clients: flagNumber(args, 'clients') ?? 8,
    batch: flagNumber(args, 'batch') ?? 500,
    checkpointIntervalS: flagNumber(args, 'checkpoint-interval-s') ?? 30,
    rawSpans: flagNumber(args, 'raw-spans') ?? Math.min(spans, 300_000),
    decodeWorkers: flagNumber(args, 'decode-workers'),
    ingestOnly: args.flags['ingest-only'] === true,
    onProgress: (line) => process.stderr.write(`${line}\n`),
  });
  const loadAfter = loadavg()[0]!;
  if (args.flags.json === true) {
    process.stdout.write(`${JSON.stringify({ ...result, loadBefore, loadAfter })}\n`);
    return 0;
  }
  const mib = (b: number | null) => (b === null ? 'n/a (remote server)' : `${(b / 2 ** 20).toFixed(0)} MiB`);
  const n = (v: number) => Math.round(v).toLocaleString('en-US');
  const ok = (pass: boolean) => (pass ? 'ok' : 'MISSED');
  const lines = [
    `ingest benchmark${args.flags['ingest-only'] === true ? ', control loop off' : ''} (${result.mode === 'process' ? 'server in a child process' : result.mode === 'in-process' ? 'server in this process' : `server at ${url}`}; ${result.clients} clients × ${result.spansPerBatch}-span protobuf batches)`,
    `  acknowledged        ${n(result.spansAcked)} spans in ${result.elapsedS.toFixed(1)} s (${n(result.requests)} requests, ${result.retries} retried after 429/503)`,
    `  throughput          ${n(result.ackedSpansPerS)} spans/s acknowledged (after commit)`,
    ...(result.rollupCatchUpS === null
      ? []
      : [
          `  with the rollup     ${n(result.spansAcked / (result.elapsedS + result.rollupCatchUpS))} spans/s taken in by the request rollup too (it finished ${result.rollupCatchUpS.toFixed(1)} s after the last ack)`,
        ]),
    `  raw Appender        ${n(result.rawAppendRowsPerS)} rows/s (same rows, fresh DB, one thread, a row at a time; ${result.rawCpuUsPerRow.row.toFixed(1)} µs CPU/row in the run before the server)`,
    ...(result.rawAppendRuns.after === null
      ? []
      : [
          `                      ${n(result.rawAppendRuns.before)} rows/s before the server ran, ${n(result.rawAppendRuns.after)} after; the ratio is against the faster${referenceDrift(result.rawAppendRuns.before, result.rawAppendRuns.after)}`,
        ]),
    `  allocators          reference ${result.allocators.reference}, server ${result.allocators.server ?? 'unknown'}${result.allocators.server !== null && result.allocators.server !== result.allocators.reference ? '  (NOT ALIKE: the ratio compares two allocators; run it as `pnpm governor bench ingest`)' : ''}`,
    `  raw DataChunk       ${n(result.rawChunkAppendRowsPerS)} rows/s, ${result.rawCpuUsPerRow.chunk.toFixed(1)} µs CPU/row (rows laid out as columns + appendDataChunk per 2,048, as the server appends)`,
    `  ratio               ${result.ratio.toFixed(2)}   target ≥ 0.60  ${ok(result.ratio >= 0.6)}`,
    `  ack latency p50     ${result.ackP50Ms.toFixed(1)} ms`,
    `  ack latency p99     ${result.ackP99Ms.toFixed(1)} ms   target ≤ 250 ms  ${ok(result.ackP99Ms <= 250)}`,
    `  ack latency max     ${result.ackMaxMs.toFixed(1)} ms   (stalls; target: no multi-second stall  ${ok(result.ackMaxMs < 1000)})`,
    `  server peak RSS     ${mib(result.serverPeakRssBytes)}   target ≤ 1.5 GiB  ${result.serverPeakRssBytes === null ? '' : ok(result.serverPeakRssBytes <= 1.5 * 2 ** 30)}`,
    `  decode+normalize    ${n(result.decodeNormalizeSpansPerS)} spans/s on one thread (for reference)`,
    ...(result.cpu
      ? [
          `  main-thread CPU     raw Appender ${result.cpu.rawMainThreadUsPerRow.toFixed(1)} µs/row, server ${result.cpu.serverMainThreadUsPerSpan.toFixed(1)} µs/span → ratio ${result.cpu.cpuRatio.toFixed(2)} with a core to itself`,
          `  server CPU          ${result.cpu.serverProcessUsPerSpan.toFixed(1)} µs/span over all threads; main thread waited ${result.cpu.serverMainThreadWaitingS.toFixed(1)} s for a CPU (other load)`,
        ]
      : []),
    ...(result.server && Number.isFinite(result.server.checkpoints)
      ? [
          `  server              ${result.server.checkpoints} checkpoints (longest ${result.server.maxCheckpointS.toFixed(2)} s, commits went to the ingest stage meanwhile), ${n(result.server.flushes)} group commits (longest flush ${(result.server.maxFlushS * 1000).toFixed(0)} ms)`,
        ]
      : []),
  ];
  if (result.stages) {
    lines.push(...formatStageTable(result.stages, result.rawCpuUsPerRow));
    lines.push(
      `    rollups caught up ${result.rollupCatchUpS === null ? 'not within 3 min (stage figures miss the rest)' : `${result.rollupCatchUpS.toFixed(1)} s after the last ack (counters read then)`}`,
    );
  }
  // Wall-clock rates only mean something on an otherwise idle machine; say how idle it was.
  lines.push(
    `  machine load        ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after (1-min load average, ${availableParallelism()} cores)`,
  );
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}

const STAGE_LABELS: Record<string, string> = {
  http: 'HTTP + body read',
  decode: 'decode',
  normalize: 'normalize',
  transfer: 'rows to main thread',
  append: 'append',
  commit: 'commit (flush)',
  rollup_refresh: 'rollup refresh',
  checkpoint: 'checkpoint + moves',
  other_threads: 'other threads',
};

/** A warning when the two reference runs differ by more than 15 %: the machine's speed changed. */
function referenceDrift(before: number, after: number): string {
  const gap = Math.abs(before - after) / Math.max(before, after);
  return gap > 0.15
    ? `  (DRIFT: the runs differ by ${Math.round(gap * 100)} %: the machine's speed changed during the benchmark; run it again)`
    : '';
}

/** The CPU budget of a span, stage by stage, next to the raw Appender's cost of a row. */
function formatStageTable(
  stages: NonNullable<IngestBenchResult['stages']>,
  raw: IngestBenchResult['rawCpuUsPerRow'],
): string[] {
  const us = stages.stageUsPerSpan;
  const total = Object.values(us).reduce((a, b) => a + b, 0);
  const t = stages.threadUsPerSpan;
  return [
    '  CPU per acknowledged span, by stage (server counters, µs):',
    ...Object.entries(STAGE_LABELS).map(
      ([stage, label]) =>
        `    ${label.padEnd(22)}${(us[stage] ?? 0).toFixed(1).padStart(7)}  ${(((us[stage] ?? 0) / (total || 1)) * 100).toFixed(0).padStart(3)} %`,
    ),
    `    ${'total'.padEnd(22)}${total.toFixed(1).padStart(7)}   (main thread ${(t.main ?? 0).toFixed(1)}, decode workers ${(t.decode_workers ?? 0).toFixed(1)}, other threads ${(t.other ?? 0).toFixed(1)})`,
    `    raw reference: row Appender ${raw.row.toFixed(1)} µs/row, DataChunk ${raw.chunk.toFixed(1)} µs/row (append + commit, one thread)`,
  ];
}
