import { type ParsedArgs, UsageError, flagNumber, flagString } from '../cli/parse-args.ts';
import { runClickHouseSignalsBench } from './bench-signals-clickhouse.ts';
import { runSignalsBench } from './bench-signals.ts';
import { BenchSetupError } from './scale-out-engines.ts';

export const BENCH_SIGNALS_USAGE =
  'governor bench signals [--engine duckdb] [--spans 20000000] [--hours 2] [--runs 30] [--raw-runs 2] [--data-dir D (kept, reused when it holds a store)]\n' +
  '       governor bench signals --engine clickhouse [--spans 20000000] [--hours 2] [--runs 30]\n' +
  '         (a two-shard ClickHouse cluster on loopback, loaded through the ClickHouse writer and rolled up at ~10k spans/s: use a smaller --spans)';

export async function runBenchSignalsCommand(args: ParsedArgs): Promise<number> {
  if (args.flags.help === true) {
    process.stdout.write(`usage: ${BENCH_SIGNALS_USAGE}\n`);
    return 0;
  }
  const spans = flagNumber(args, 'spans') ?? 20_000_000;
  const hours = flagNumber(args, 'hours') ?? 2;
  const runs = flagNumber(args, 'runs') ?? 30;
  const rawRuns = flagNumber(args, 'raw-runs') ?? 2;
  if (!(spans > 0 && hours > 0 && runs > 0 && rawRuns > 0)) {
    process.stderr.write(
      `--spans, --hours, --runs and --raw-runs must be positive\nusage: ${BENCH_SIGNALS_USAGE}\n`,
    );
    return 2;
  }
  const engine = flagString(args, 'engine') ?? 'duckdb';
  if (engine !== 'duckdb' && engine !== 'clickhouse')
    throw new UsageError(
      `--engine is duckdb or clickhouse, not "${engine}"`,
      'governor bench signals --help',
    );
  if (engine === 'clickhouse') {
    for (const flag of ['raw-runs', 'data-dir'])
      if (args.flags[flag] !== undefined)
        throw new UsageError(
          `--${flag} is for the DuckDB store (ClickHouse has no raw source; its cluster is temporary)`,
          'governor bench signals --help',
        );
    try {
      await runClickHouseSignalsBench({
        spans,
        hours,
        runs,
        shards: 2,
        log: (line) => process.stdout.write(`${line}\n`),
      });
    } catch (error) {
      if (!(error instanceof BenchSetupError)) throw error;
      process.stderr.write(`governor: ${error.message}\n`);
      return 1;
    }
    return 0;
  }
  const dataDir = flagString(args, 'data-dir');
  await runSignalsBench({
    spans,
    hours,
    runs,
    rawRuns,
    ...(dataDir === undefined ? {} : { dataDir }),
    log: (line) => process.stdout.write(`${line}\n`),
  });
  return 0;
}
