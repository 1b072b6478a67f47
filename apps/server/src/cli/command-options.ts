import type { CommandOptions } from './parse-args.ts';

/** Every option each command accepts; anything else is a usage error naming the flag. */
export const COMMAND_OPTIONS = {
  start: {
    strings: ['config', 'data-dir', 'host', 'http-port', 'grpc-port'],
    switches: ['demo', 'insecure'],
  },
  query: { strings: ['url', 'limit', 'format', 'config'] },
  config: { strings: ['name', 'scopes'] },
  replay: { strings: ['from', 'to', 'config', 'data-dir'], switches: ['json'] },
  retention: { strings: ['config', 'url', 'data-dir'], switches: ['offline'] },
  control: { strings: ['to', 'config', 'data-dir'] },
  migrate: { strings: ['config', 'from'], switches: ['dry-run'] },
} satisfies Record<string, CommandOptions>;

export const BENCH_OPTIONS = {
  ingest: {
    strings: [
      'url',
      'spans',
      'clients',
      'batch',
      'checkpoint-interval-s',
      'decode-workers',
      'raw-spans',
      'engine',
      'nodes',
      'shards',
      'rollup-timeout-s',
    ],
    switches: ['in-process', 'json', 'ingest-only'],
  },
  signals: { strings: ['spans', 'hours', 'runs', 'raw-runs', 'data-dir', 'engine'] },
  soak: {
    strings: [
      'minutes',
      'fraction',
      'rate',
      'measure-s',
      'interval-s',
      'batch',
      'retention-ttl-hours',
      'duckdb-threads',
      'json',
    ],
    switches: ['heavy-reads'],
  },
  control: {
    strings: ['json', 'duration', 'seed', 'seeds', 'set', 'scenario', 'workload', 'data-dir'],
    switches: ['quick', 'explain'],
  },
} satisfies Record<string, CommandOptions>;
