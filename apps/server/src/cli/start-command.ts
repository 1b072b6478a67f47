import { findJemalloc, runningAllocator } from '../allocator.ts';
import type { GovernorConfig } from '@governor/conventions';
import { loadConfig, readLogLevel } from '../load-config.ts';
import { DataDirError } from '@governor/store';
import { startGovernor } from '../start-governor.ts';
import { type ParsedArgs, flagNumber, flagString } from './parse-args.ts';
import { type DemoFleet, startDemoFleet } from './start-demo-fleet.ts';

export async function runStartCommand(args: ParsedArgs): Promise<number> {
  // Both throw a ConfigError (one line per problem, exit 1) before the data directory is touched.
  const config: GovernorConfig = loadConfig(flagString(args, 'config'));
  const level = readLogLevel(process.env);
  const dataDir = flagString(args, 'data-dir');
  const host = flagString(args, 'host');
  const httpPort = flagNumber(args, 'http-port');
  const grpcPort = flagNumber(args, 'grpc-port');
  if (dataDir) config.server.data_dir = dataDir;
  if (host) config.server.host = host;
  if (httpPort !== undefined) config.server.http_port = httpPort;
  if (grpcPort !== undefined) config.server.grpc_port = grpcPort;
  if (args.flags.insecure === true) config.server.insecure = true;

  let governor: Awaited<ReturnType<typeof startGovernor>>;
  try {
    governor = await startGovernor({ config, logger: { level } });
  } catch (error) {
    if (!(error instanceof DataDirError)) throw error;
    process.stderr.write(`governor: ${error.message}\n`);
    return 1;
  }
  const log = governor.app.log;
  log.info(
    `Governor is up: console and API on ${governor.httpUrl}, OTLP/HTTP ${governor.httpUrl}/v1/traces, OTLP/gRPC ${config.server.host}:${governor.grpcPort}, ${governor.engine.embedded ? `data in ${governor.engine.embedded.dataDir}` : `telemetry in ClickHouse, state in PostgreSQL`}`,
  );

  const allocator = runningAllocator();
  if (allocator === 'glibc' && process.env.MALLOC_ARENA_MAX === undefined) {
    log.warn(
      'MALLOC_ARENA_MAX is not set: glibc gives each busy thread its own malloc arena and the RSS grows by hundreds of MB under load; start with `pnpm governor`, which preloads jemalloc when installed (apt-get install libjemalloc2) and else sets MALLOC_ARENA_MAX=2 (docs/operations.md, "Memory")',
    );
  } else if (allocator === 'glibc' && findJemalloc() !== null) {
    log.info(
      `running on glibc's malloc although ${findJemalloc()} is installed: \`pnpm governor\` preloads it (less CPU per commit, docs/operations.md, "Memory"); GOVERNOR_ALLOCATOR=glibc keeps glibc`,
    );
  }
  let demo: DemoFleet | null = null;
  if (args.flags.demo === true) demo = startDemoFleet(governor.httpUrl, (m) => log.info(m));

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    demo?.stop();
    log.info(`${signal} received: stopping intake, flushing the write queue and checkpointing`);
    const hardStop = setTimeout(() => {
      log.error('shutdown took longer than 30 s; exiting anyway (committed data is safe in the WAL)');
      process.exit(1);
    }, 30_000);
    hardStop.unref();
    try {
      await governor.close();
      log.info('Governor stopped cleanly');
      process.exit(0);
    } catch (error) {
      log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  return new Promise<number>(() => {});
}
