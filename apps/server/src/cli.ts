#!/usr/bin/env node
import { ClickHouseConfigError } from '@governor/store';
import { EngineStartError } from './engines/open-engine.ts';
import { ConfigError } from './load-config.ts';
import { BENCH_CONTROL_USAGE, runBenchControlCommand } from './bench/control-bench-command.ts';
import { BENCH_SIGNALS_USAGE, runBenchSignalsCommand } from './bench/signals-bench-command.ts';
import { BENCH_SOAK_USAGE, runBenchSoakCommand } from './bench/soak-command.ts';
import { BENCH_INGEST_USAGE, runBenchIngestCommand } from './cli/bench-ingest-command.ts';
import { CONFIG_USAGE, runConfigCommand } from './cli/config-command.ts';
import { CONTROL_USAGE, runControlCommand } from './cli/control-command.ts';
import { BENCH_OPTIONS, COMMAND_OPTIONS } from './cli/command-options.ts';
import { MIGRATE_USAGE, runMigrateCommand } from './cli/migrate-command.ts';
import { type ParsedArgs, UsageError, parseArgs } from './cli/parse-args.ts';
import { runQueryCommand } from './cli/query-command.ts';
import { REPLAY_USAGE, runReplayCommand } from './cli/replay-command.ts';
import { RETENTION_USAGE, runRetentionCommand } from './cli/retention-command.ts';
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
  control reset --to now|TIME [--config F] [--data-dir D]
  migrate --config F --from D [--dry-run]   (a stopped Governor's store into ClickHouse + PostgreSQL; safe to repeat)
`;

const COMMAND_USAGE: Record<keyof typeof COMMAND_OPTIONS, string> = {
  start: USAGE,
  query: USAGE,
  config: CONFIG_USAGE,
  replay: `usage: ${REPLAY_USAGE}`,
  retention: RETENTION_USAGE,
  control: CONTROL_USAGE,
  migrate: MIGRATE_USAGE,
};

const BENCH_USAGE: Record<keyof typeof BENCH_OPTIONS, string> = {
  ingest: BENCH_INGEST_USAGE,
  signals: BENCH_SIGNALS_USAGE,
  soak: BENCH_SOAK_USAGE,
  control: BENCH_CONTROL_USAGE,
};

/** Parses a command's options; `null` when `--help` was asked for and the usage was printed. */
function parseCommand(command: keyof typeof COMMAND_OPTIONS, argv: string[]): ParsedArgs | null {
  const args = parseArgs(argv, COMMAND_OPTIONS[command], `governor ${command}`);
  if (args.flags.help !== true) return args;
  process.stdout.write(`${COMMAND_USAGE[command].trimEnd()}\n`);
  return null;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'sim') {
    const { runSimCli } = await import('@governor/simulator');
    return runSimCli(rest);
  }
  if (command === 'bench') return runBenchCommand(rest);
  if (command !== undefined && Object.hasOwn(COMMAND_OPTIONS, command)) {
    const name = command as keyof typeof COMMAND_OPTIONS;
    const args = parseCommand(name, rest);
    if (args === null) return 0;
    switch (name) {
      case 'start':
        return runStartCommand(args);
      case 'query':
        return runQueryCommand(args);
      case 'config':
        return runConfigCommand(args);
      case 'replay':
        return runReplayCommand(args);
      case 'retention':
        return runRetentionCommand(args);
      case 'control':
        return runControlCommand(args);
      case 'migrate':
        return runMigrateCommand(args);
    }
  }
  switch (command) {
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

async function runBenchCommand(argv: string[]): Promise<number> {
  const [subcommand, ...rest] = argv;
  if (subcommand === undefined || !Object.hasOwn(BENCH_OPTIONS, subcommand)) {
    process.stderr.write(
      `unknown benchmark "${subcommand ?? ''}"\nusage: ${BENCH_INGEST_USAGE}\n       ${BENCH_SIGNALS_USAGE}\n       ${BENCH_SOAK_USAGE}\n       ${BENCH_CONTROL_USAGE}\n`,
    );
    return 2;
  }
  const name = subcommand as keyof typeof BENCH_OPTIONS;
  const args = parseArgs(rest, BENCH_OPTIONS[name], `governor bench ${name}`);
  // A benchmark runs for minutes: `--help` must print its usage, never start it.
  if (args.flags.help === true) {
    process.stdout.write(`usage: ${BENCH_USAGE[name]}\n`);
    return 0;
  }
  switch (name) {
    case 'ingest':
      return runBenchIngestCommand(args);
    case 'signals':
      return runBenchSignalsCommand(args);
    case 'soak':
      return runBenchSoakCommand(args);
    case 'control':
      return runBenchControlCommand(args);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`governor: ${error.message} (see ${error.help})\n`);
      process.exit(2);
    }
    // Errors that already say what to do: no stack trace.
    if (error instanceof ConfigError) process.stderr.write(`${error.message}\n`);
    else if (error instanceof ClickHouseConfigError || error instanceof EngineStartError)
      process.stderr.write(`governor: ${error.message}\n`);
    else process.stderr.write(`governor: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
