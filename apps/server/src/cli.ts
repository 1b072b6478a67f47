#!/usr/bin/env node
import { ConfigError } from './load-config.ts';
import { BENCH_CONTROL_USAGE, runBenchControlCommand } from './bench/control-bench-command.ts';
import { BENCH_SIGNALS_USAGE, runBenchSignalsCommand } from './bench/signals-bench-command.ts';
import { BENCH_SOAK_USAGE, runBenchSoakCommand } from './bench/soak-command.ts';
import { BENCH_INGEST_USAGE, runBenchIngestCommand } from './cli/bench-ingest-command.ts';
import { runConfigCommand } from './cli/config-command.ts';
import { UsageError, parseArgs } from './cli/parse-args.ts';
import { runQueryCommand } from './cli/query-command.ts';
import { REPLAY_USAGE, runReplayCommand } from './cli/replay-command.ts';
import { runRetentionCommand } from './cli/retention-command.ts';
import { runStartCommand } from './cli/start-command.ts';

const USAGE = `usage: governor <command> [options]

commands:
  start  [--config F] [--data-dir D] [--host 127.0.0.1] [--http-port 4318] [--grpc-port 4317] [--demo] [--insecure]
  query  "SQL" [--url URL] [--limit N] [--format table|json|csv]
  sim    --workload W --scenario S --duration D --speed max|N --target URL …   (governor sim --help)
  bench  ingest|signals|control|soak [options]
  config check FILE | token [--name N --scopes read+operate] | hash-token [TOKEN]
  retention run [--url URL | --offline [--data-dir D]]
  replay --from T1 --to T2 [--config F] [--data-dir D] [--json]
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'start':
      return runStartCommand(parseArgs(rest, ['demo', 'insecure']));
    case 'query':
      return runQueryCommand(parseArgs(rest));
    case 'sim': {
      const { runSimCli } = await import('@governor/simulator');
      return runSimCli(rest);
    }
    case 'bench':
      return runBenchCommand(rest);
    case 'config':
      return runConfigCommand(parseArgs(rest));
    case 'replay':
      if (rest.includes('--help') || rest.includes('-h')) {
        process.stdout.write(`usage: ${REPLAY_USAGE}\n`);
        return 0;
      }
      return runReplayCommand(parseArgs(rest, ['json']));
    case 'retention':
      return runRetentionCommand(parseArgs(rest, ['offline']));
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`unknown command "${command}"\n${USAGE}`);
      return 2;
  }
}

const BENCH_USAGE: Record<string, string> = {
  ingest: BENCH_INGEST_USAGE,
  signals: BENCH_SIGNALS_USAGE,
  soak: BENCH_SOAK_USAGE,
  control: BENCH_CONTROL_USAGE,
};

async function runBenchCommand(argv: string[]): Promise<number> {
  const [subcommand, ...rest] = argv;
  // A benchmark runs for minutes: `--help` must print its usage, never start it.
  const usage = subcommand === undefined ? undefined : BENCH_USAGE[subcommand];
  if (usage && (rest.includes('--help') || rest.includes('-h'))) {
    process.stdout.write(`usage: ${usage}\n`);
    return 0;
  }
  switch (subcommand) {
    case 'ingest':
      return runBenchIngestCommand(parseArgs(rest, ['in-process', 'json', 'ingest-only']));
    case 'signals':
      return runBenchSignalsCommand(parseArgs(rest, ['help']));
    case 'soak':
      return runBenchSoakCommand(parseArgs(rest));
    case 'control':
      return runBenchControlCommand(parseArgs(rest, ['quick', 'explain']));
    default:
      process.stderr.write(
        `unknown benchmark "${subcommand ?? ''}"\nusage: ${BENCH_INGEST_USAGE}\n       ${BENCH_SIGNALS_USAGE}\n       ${BENCH_SOAK_USAGE}\n       ${BENCH_CONTROL_USAGE}\n`,
      );
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`governor: ${error.message} (see governor --help)\n`);
      process.exit(2);
    }
    if (error instanceof ConfigError) process.stderr.write(`${error.message}\n`);
    else process.stderr.write(`governor: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
