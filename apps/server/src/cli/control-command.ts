import { createStore } from '@governor/store';
import { resetControlTime } from '../control/reset-control-time.ts';
import { loadConfig } from '../load-config.ts';
import { storeOptionsFrom } from '../store-options.ts';
import { type ParsedArgs, UsageError, flagString } from './parse-args.ts';

export const CONTROL_USAGE = `usage:
  governor control reset --to now|TIME [--config F] [--data-dir D]
      on a stopped Governor's data directory, move the control loop's and alerting's event-time
      state dated after TIME (RFC 3339, or now) back to TIME; for a store whose last tick lies in
      the future (a sender's clock was wrong) and refuses every later tick as time reversed`;

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
  const dataDir = flagString(args, 'data-dir') ?? config.server.data_dir;
  const store = await createStore(storeOptionsFrom(config.server, dataDir));
  try {
    const reset = await resetControlTime(store, BigInt(toMs) * 1_000_000n);
    process.stdout.write(
      `moved to ${new Date(toMs).toISOString()}: ${reset.recommendations} recommendations, ${reset.audit} audit entries, ${reset.alerts} alert cursor${reset.alerts === 1 ? '' : 's'}\n`,
    );
  } finally {
    await store.close();
  }
  return 0;
}
