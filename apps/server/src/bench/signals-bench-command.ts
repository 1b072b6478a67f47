import { type ParsedArgs, flagNumber, flagString } from '../cli/parse-args.ts';
import { runSignalsBench } from './bench-signals.ts';

export const BENCH_SIGNALS_USAGE =
  'governor bench signals [--spans 20000000] [--hours 2] [--runs 30] [--raw-runs 2] [--data-dir D (kept, reused when it holds a store)]';

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
