#!/usr/bin/env node
import { ConfigError } from './load-config.ts';
import { parseArgs } from './cli/parse-args.ts';
import { runQueryCommand } from './cli/query-command.ts';
import { runStartCommand } from './cli/start-command.ts';

const USAGE = `usage: governor <command> [options]

commands:
  start  [--config F] [--data-dir D] [--host 127.0.0.1] [--http-port 4318] [--grpc-port 4317] [--demo]
  query  "SQL" [--url URL] [--limit N] [--format table|json|csv]
  sim    --workload W --scenario S --duration D --speed max|N --target URL …   (governor sim --help)
  bench  ingest|signals|control|soak [options]
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'start':
      return runStartCommand(parseArgs(rest, ['demo', 'insecure']));
    case 'query':
      return runQueryCommand(parseArgs(rest));
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

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof ConfigError) process.stderr.write(`${error.message}\n`);
    else process.stderr.write(`governor: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
