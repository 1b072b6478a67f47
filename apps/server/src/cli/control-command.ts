import { migratePostgresAlertState } from '@governor/alerts';
import { migratePostgresControlState } from '@governor/control';
import { createStore } from '@governor/store';
import pg from 'pg';
import {
  type ControlTimeReset,
  resetControlTime,
  resetPostgresControlTime,
} from '../control/reset-control-time.ts';
import { loadConfig } from '../load-config.ts';
import { storeOptionsFrom } from '../store-options.ts';
import { type ParsedArgs, UsageError, flagString } from './parse-args.ts';

export const CONTROL_USAGE = `usage:
  governor control reset --to now|TIME [--config F] [--data-dir D]
      on a stopped Governor's data directory, move the control loop's and alerting's event-time
      state dated after TIME (RFC 3339, or now) back to TIME; for a store whose last tick lies in
      the future (a sender's clock was wrong) and refuses every later tick as time reversed; with
      store.engine: clickhouse, on the PostgreSQL the nodes share (stop every node first)`;

/** `governor control reset --to now`: a running Governor owns its DuckDB file; stop it first. */
export async function runControlCommand(args: ParsedArgs): Promise<number> {
  const [sub] = args.positional;
  if (sub !== 'reset') {
    process.stderr.write(`${sub ? `unknown control command "${sub}"\n` : ''}${CONTROL_USAGE}\n`);
    return 2;
  }
  const to = flagString(args, 'to');
  if (to === undefined) throw new UsageError('control reset needs --to now or --to TIME (RFC 3339)');
  const toMs = to === 'now' ? Date.now() : Date.parse(to);
  if (!Number.isFinite(toMs)) throw new UsageError(`--to expects now or an RFC 3339 time, got "${to}"`);
  const config = loadConfig(flagString(args, 'config'));
  let reset: ControlTimeReset;
  if (config.store.engine === 'clickhouse') {
    const urlEnv = config.store.postgres.url_env;
    const url = process.env[urlEnv];
    if (!url)
      throw new UsageError(`store.engine is clickhouse: set ${urlEnv} to the PostgreSQL the nodes share`);
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      await migratePostgresControlState(pool);
      await migratePostgresAlertState(pool);
      reset = await resetPostgresControlTime(pool, BigInt(toMs) * 1_000_000n);
    } finally {
      await pool.end();
    }
  } else {
    const dataDir = flagString(args, 'data-dir') ?? config.server.data_dir;
    const store = await createStore(storeOptionsFrom(config.server, dataDir));
    try {
      reset = await resetControlTime(store, BigInt(toMs) * 1_000_000n);
    } finally {
      await store.close();
    }
  }
  process.stdout.write(
    `moved to ${new Date(toMs).toISOString()}: ${reset.recommendations} recommendations, ${reset.audit} audit entries, ${reset.alerts} alert cursor${reset.alerts === 1 ? '' : 's'}\n`,
  );
  return 0;
}
