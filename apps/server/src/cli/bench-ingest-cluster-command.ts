import { availableParallelism, loadavg } from 'node:os';
import {
  type ClusterIngestBenchResult,
  type PhaseCpu,
  type SideResult,
  runClusterIngestBench,
} from '../bench/run-cluster-ingest-bench.ts';
import { BenchSetupError } from '../bench/scale-out-engines.ts';
import { type ParsedArgs, UsageError, flagNumber } from './parse-args.ts';

/**
 * `governor bench ingest --engine clickhouse [--nodes N] [--shards S]`: the same load through one
 * DuckDB node and through N nodes on a ClickHouse cluster + PostgreSQL, started here.
 */
export async function runBenchIngestClusterCommand(args: ParsedArgs): Promise<number> {
  for (const flag of ['url', 'in-process', 'raw-spans'])
    if (args.flags[flag] !== undefined)
      throw new UsageError(
        `--${flag} is for the DuckDB benchmark; --engine clickhouse starts its own nodes`,
        'governor bench ingest --help',
      );
  const nodes = flagNumber(args, 'nodes') ?? 2;
  const shards = flagNumber(args, 'shards') ?? 2;
  if (!(Number.isInteger(nodes) && nodes >= 1 && Number.isInteger(shards) && shards >= 1))
    throw new UsageError('--nodes and --shards must be whole numbers ≥ 1', 'governor bench ingest --help');
  const loadBefore = loadavg()[0]!;
  let result: ClusterIngestBenchResult;
  try {
    result = await runClusterIngestBench({
      nodes,
      shards,
      spans: flagNumber(args, 'spans') ?? 600_000,
      clients: flagNumber(args, 'clients') ?? 8,
      batch: flagNumber(args, 'batch') ?? 500,
      checkpointIntervalS: flagNumber(args, 'checkpoint-interval-s') ?? 30,
      decodeWorkers: flagNumber(args, 'decode-workers'),
      ingestOnly: args.flags['ingest-only'] === true,
      rollupTimeoutS: flagNumber(args, 'rollup-timeout-s') ?? 900,
      onProgress: (line) => process.stderr.write(`${line}\n`),
    });
  } catch (error) {
    if (error instanceof BenchSetupError) {
      process.stderr.write(`governor: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
  const loadAfter = loadavg()[0]!;
  if (args.flags.json === true) {
    process.stdout.write(`${JSON.stringify({ ...result, loadBefore, loadAfter })}\n`);
    return 0;
  }
  process.stdout.write(
    `${formatClusterIngest(result, args.flags['ingest-only'] === true, loadBefore, loadAfter).join('\n')}\n`,
  );
  return 0;
}

export function formatClusterIngest(
  result: ClusterIngestBenchResult,
  ingestOnly: boolean,
  loadBefore: number,
  loadAfter: number,
): string[] {
  const { duckdb, clickhouse } = result;
  const n = (v: number) => Math.round(v).toLocaleString('en-US');
  const row = (label: string, a: string, b: string, note = '') =>
    `  ${label.padEnd(28)}${a.padEnd(30)}${b}${note ? `   ${note}` : ''}`;
  const both = (f: (s: SideResult) => string) => [f(duckdb), f(clickhouse)] as const;
  const ms = (v: number) => `${v.toFixed(1)} ms`;
  const cpuRows = (title: string, pick: (s: SideResult) => PhaseCpu) => {
    const cores = (cpuMs: number, p: PhaseCpu) => (p.wallS > 0 ? cpuMs / 1000 / p.wallS : 0);
    const perSpan = (cpuMs: number, s: SideResult) => (s.spansAcked > 0 ? (cpuMs * 1000) / s.spansAcked : 0);
    const cell = (s: SideResult, values: (p: PhaseCpu) => number[]) => {
      const p = pick(s);
      const v = values(p);
      if (v.length === 0) return '–';
      const sum = v.reduce((a, b) => a + b, 0);
      return `${v.map((x) => cores(x, p).toFixed(2)).join(' + ')} (${perSpan(sum, s).toFixed(1)} µs)`;
    };
    const rest = (p: PhaseCpu) => {
      if (p.machineMs === null) return [];
      const known =
        p.nodes.reduce((a, x) => a + x.processMs, 0) +
        p.clickhouseMs.reduce((a, b) => a + b, 0) +
        p.loadGeneratorMs;
      return [Math.max(0, p.machineMs - known)];
    };
    return [
      `  ${title} (${pick(duckdb).wallS.toFixed(1)} s and ${pick(clickhouse).wallS.toFixed(1)} s), cores (µs per acknowledged span):`,
      row('  node main threads', ...both((s) => cell(s, (p) => p.nodes.map((x) => x.mainThreadMs)))),
      row('  nodes, all threads', ...both((s) => cell(s, (p) => p.nodes.map((x) => x.processMs)))),
      row('  ClickHouse servers', ...both((s) => cell(s, (p) => p.clickhouseMs))),
      row('  load generator (here)', ...both((s) => cell(s, (p) => [p.loadGeneratorMs]))),
      row('  rest of the machine', ...both((s) => cell(s, rest)), '(PostgreSQL, other processes)'),
    ];
  };
  const withRollup = (s: SideResult) =>
    s.rollupLagS === null ? 'n/a' : `${n(s.spansAcked / (s.elapsedS + s.rollupLagS))} spans/s`;
  return [
    `ingest benchmark${ingestOnly ? ', control loop off' : ''}: the same load through one DuckDB node, then through ${clickhouse.nodes} nodes on ClickHouse (${clickhouse.shards} shards) + PostgreSQL`,
    `  (${result.clients} clients × ${result.spansPerBatch}-span protobuf batches of whole traces; batch i to node i mod N, the clients split among the nodes; every process on this machine)`,
    row('', `duckdb, 1 node`, `clickhouse, ${clickhouse.nodes} nodes`),
    row('acknowledged', ...both((s) => `${n(s.spansAcked)} spans in ${s.elapsedS.toFixed(1)} s`)),
    row(
      'throughput',
      ...both((s) => `${n(s.ackedSpansPerS)} spans/s`),
      `(${(clickhouse.ackedSpansPerS / duckdb.ackedSpansPerS).toFixed(2)} × the DuckDB node)`,
    ),
    row('requests (retried 429/503)', ...both((s) => `${n(s.requests)} (${n(s.retries)})`)),
    row(
      'per node',
      ...both((s) => s.perNode.map((p) => `${n(p.spansPerS)}/s (${p.clients} clients)`).join(', ')),
      '(each until its own last ack)',
    ),
    row(
      'refused, by reason',
      ...both((s) =>
        s.perNode
          .map(
            (p) =>
              Object.entries(p.refusedByReason)
                .map(([reason, count]) => `${reason} ${n(count)}`)
                .join(' ') || 'none',
          )
          .join(', '),
      ),
      '(governor_ingest_requests_rejected_total)',
    ),
    row('ack latency p50', ...both((s) => ms(s.ackP50Ms))),
    row('ack latency p99', ...both((s) => ms(s.ackP99Ms))),
    row('ack latency max', ...both((s) => ms(s.ackMaxMs))),
    row(
      'rollup lag after last ack',
      ...both((s) => (s.rollupLagS === null ? 'not caught up (timeout)' : `${s.rollupLagS.toFixed(1)} s`)),
      '(until request_facts holds every trace)',
    ),
    row('with the rollup', ...both(withRollup), '(acknowledged / (ingest + lag))'),
    row(
      'node peak RSS',
      ...both((s) => `${s.nodePeakRssBytes.map((b) => (b / 2 ** 20).toFixed(0)).join(' + ')} MiB`),
    ),
    ...cpuRows('CPU while ingesting', (s) => s.ingestCpu),
    ...cpuRows('CPU from the last ack until the rollup caught up', (s) => s.rollupTailCpu),
    ...clickHouseWork('while ingesting', clickhouse.clickhouseEvents.ingest, clickhouse.spansAcked),
    ...clickHouseWork(
      'until the rollup caught up',
      clickhouse.clickhouseEvents.rollupTail,
      clickhouse.spansAcked,
    ),
    `  machine load        ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after (1-min load average, ${availableParallelism()} cores)`,
  ];
}

/** What the ClickHouse servers did over a phase, from their system.events (summed over the shards). */
function clickHouseWork(phase: string, events: Record<string, number>, spans: number): string[] {
  if (Object.keys(events).length === 0) return [];
  const n = (v: number | undefined) => Math.round(v ?? 0).toLocaleString('en-US');
  const s = (us: number | undefined) => ((us ?? 0) / 1e6).toFixed(1);
  const parts = [
    `${n(events.InsertQuery)} INSERTs (${n(events.InsertedRows)} rows into tables)`,
    `${n(events.SelectQuery)} SELECTs`,
    `background merges of ${n(events.MergedRows)} rows (${s((events.MergesTimeMilliseconds ?? 0) * 1000)} s of merge time)`,
  ];
  if (events.UserTimeMicroseconds !== undefined)
    parts.push(
      `query threads ${s(events.UserTimeMicroseconds)} s user + ${s(events.SystemTimeMicroseconds)} s system CPU ` +
        `(${(((events.UserTimeMicroseconds ?? 0) + (events.SystemTimeMicroseconds ?? 0)) / Math.max(1, spans)).toFixed(1)} µs per acknowledged span)`,
    );
  return [`  ClickHouse ${phase} (system.events, all shards): ${parts.join(', ')}`];
}
