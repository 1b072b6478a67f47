import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { migratePostgresAlertState } from '@governor/alerts';
import {
  createDuckDbRepository,
  createPostgresRepository,
  migratePostgresControlState,
} from '@governor/control';
import { createSignals } from '@governor/signals';
import {
  type ClickHouseStore,
  MAIN_FILE,
  type Store,
  createStore,
  openClickHouseStore,
} from '@governor/store';
import pg from 'pg';
import { loadConfig } from '../load-config.ts';
import { storeOptionsFrom } from '../store-options.ts';
import { formatTable } from './format-table.ts';
import {
  type CopyProgress,
  type CopyResult,
  STATE_TABLES,
  TELEMETRY_TABLES,
  clickHouseAuth,
  copyControlState,
  copyStateTable,
  copyTelemetryTable,
  countSource,
  deduplicateReruns,
  unrolledSpans,
} from './migrate-store.ts';
import { type ParsedArgs, UsageError, flagString } from './parse-args.ts';

export const MIGRATE_USAGE = `usage:
  governor migrate --config F --from D [--dry-run]
      copy the embedded store of a stopped Governor (its data directory D; stop it first) into the
      ClickHouse cluster and PostgreSQL database that F names (store.engine: clickhouse; the
      connection string in the variable store.postgres.url_env), creating their tables: spans,
      metric points and request facts to ClickHouse; recommendations, audit log, policies, rollback
      values, alert episodes, notification groups, the alert cursor and the delivery log to
      PostgreSQL. Run it before the nodes start on that database.
      Safe to run again (after an interruption, or twice): every row is written under its identity —
      ClickHouse replaces a row with the same key (and merges the partitions written twice), PostgreSQL
      upserts by key — so nothing is duplicated.
  --dry-run   open D and print the rows each table would copy; nothing is written to ClickHouse or PostgreSQL`;

/** Stops the Governor that owns a file first: DuckDB's file lock, in its own words, and what to do. */
const LOCKED = /lock on file|Conflicting lock|database is locked|already open/i;

/**
 * `governor migrate`: the embedded (DuckDB) store of a stopped Governor into the scale-out engine
 * (docs/scale-out-design.md). Telemetry goes to ClickHouse through the same writer and rollup I/O the
 * nodes use, state to PostgreSQL through the repositories where they read and write everything, else
 * column for column. Progress on stderr, the summary on stdout.
 */
export async function runMigrateCommand(
  args: ParsedArgs,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const configFile = flagString(args, 'config');
  const from = flagString(args, 'from');
  if (configFile === undefined || from === undefined)
    throw new UsageError(
      'migrate needs --config F (a config with store.engine: clickhouse) and --from D (the data directory of the Governor to migrate)',
      'governor migrate --help',
    );
  if (args.positional.length > 0)
    throw new UsageError(`unexpected argument "${args.positional[0]}"`, 'governor migrate --help');
  const dryRun = args.flags['dry-run'] === true;
  const fail = (message: string) => {
    process.stderr.write(`governor migrate: ${message}\n`);
    return 1;
  };

  const config = loadConfig(configFile, env);
  const storeConfig = config.store;
  const clickhouse = 'clickhouse' in storeConfig ? storeConfig.clickhouse : undefined;
  if (storeConfig.engine !== 'clickhouse' || !clickhouse)
    return fail(
      `${configFile} has store.engine: ${storeConfig.engine}: migrate copies into the engine a config's store section names — give it the config of the new nodes (store: {engine: clickhouse, clickhouse: {url, …}, postgres: {url_env}})`,
    );
  const { postgres } = storeConfig;
  const postgresUrl = env[postgres.url_env];
  if (!postgresUrl)
    return fail(
      `${postgres.url_env} (store.postgres.url_env) is not set: set it to the PostgreSQL connection string the nodes will share (postgres://user:password@host:5432/governor)`,
    );
  const dataDir = resolve(from);
  if (!statSync(dataDir, { throwIfNoEntry: false })?.isDirectory() || !existsSync(join(dataDir, MAIN_FILE)))
    return fail(
      `no Governor store in ${dataDir} (no ${MAIN_FILE}): --from takes the data directory (server.data_dir) of the Governor whose data to migrate`,
    );

  let source: Store;
  try {
    // As `governor start` opens it: staged rows of an unclean stop are recovered, older stores migrated.
    source = await createStore({
      ...storeOptionsFrom(config.server, dataDir),
      readDeadlineMs: 600_000,
      backgroundNice: null,
    });
  } catch (error) {
    const message = (error as Error).message;
    return fail(
      LOCKED.test(message)
        ? `${dataDir} is in use by another process — a Governor still running on it? Stop it first: migrate copies a stopped Governor's store (DuckDB allows one process per file). (${message.split('\n')[0]})`
        : `cannot open the store in ${dataDir}: ${message.split('\n')[0]}`,
    );
  }

  const started = performance.now();
  const target = `ClickHouse ${clickhouse.url} (database ${clickhouse.database}) and PostgreSQL ($${postgres.url_env})`;
  let pool: pg.Pool | null = null;
  let store: ClickHouseStore | null = null;
  let step = 'reading the source';
  try {
    if (dryRun) {
      const rows: unknown[][] = [];
      for (const t of [...TELEMETRY_TABLES, ...STATE_TABLES])
        rows.push([t.table, t.target, await countSource(source, t.source)]);
      process.stdout.write(
        `dry run: nothing written to ${target}\nwould copy from ${dataDir}:\n\n${formatTable(['table', 'to', 'rows'], rows)}\n`,
      );
      const unrolled = await unrolledSpans(source);
      if (unrolled > 0)
        process.stdout.write(
          `\n${unrolled} spans are not rolled up into request_facts yet: a real run rolls them up first, so it copies more request facts than counted here\n`,
        );
      return 0;
    }

    step = 'rolling up the source';
    // Nodes roll up only what they ingest: facts the embedded store had not computed yet would be
    // missing for good. (Always: after retention the count of unrolled spans is only an estimate.)
    const unrolled = await unrolledSpans(source);
    if (unrolled > 0)
      process.stderr.write(`migrate: rolling up ${unrolled} spans not yet in request_facts\n`);
    await createSignals(source, config).refresh({ force: true });

    step = 'preparing PostgreSQL';
    pool = new pg.Pool({ connectionString: postgresUrl, max: 4 });
    await migratePostgresControlState(pool);
    await migratePostgresAlertState(pool);
    step = 'preparing ClickHouse';
    store = await openClickHouseStore({
      config: clickhouse,
      env,
      readDeadlineMs: 600_000,
      maxQueuedRows: 1_000_000,
    });

    const results: CopyResult[] = [];
    const progress = progressReporter();
    const nonEmpty: string[] = [];
    for (const t of TELEMETRY_TABLES) {
      step = `copying ${t.table}`;
      const [existing] = await store.reader.query<{ n: string | number }>(
        `SELECT count() AS n FROM {{database}}.${t.table}`,
      );
      if (Number(existing?.n ?? 0) > 0) nonEmpty.push(t.table);
      results.push(await copyTelemetryTable(source, store, t, progress));
    }
    if (nonEmpty.length > 0) {
      step = 'merging re-copied rows';
      process.stderr.write(
        `migrate: ${nonEmpty.join(', ')} held rows before this run: merging the partitions written twice\n`,
      );
      await deduplicateReruns(clickhouse, clickHouseAuth(clickhouse, env), nonEmpty);
    }
    step = 'copying control state';
    results.push(
      ...(await copyControlState(createDuckDbRepository(source), createPostgresRepository(pool), progress)),
    );
    for (const t of STATE_TABLES.filter((s) => s.direct)) {
      step = `copying ${t.table}`;
      results.push(await copyStateTable(source, pool, t, progress));
    }

    const seconds = (performance.now() - started) / 1000;
    process.stdout.write(
      `migrated ${dataDir} into ${target} in ${seconds.toFixed(1)} s\n\n${formatTable(
        ['table', 'to', 'rows', 'seconds', 'rows/s'],
        results.map((r) => [
          r.table,
          r.target,
          r.rows,
          r.seconds.toFixed(1),
          r.rows > 0 && r.seconds > 0 ? Math.round(r.rows / r.seconds) : '-',
        ]),
      )}\n\nRunning it again copies the same rows under the same keys: nothing is duplicated.\n`,
    );
    return 0;
  } catch (error) {
    return fail(
      `failed ${step}: ${(error as Error).message.split('\n')[0]}\nWhat was copied stays; run it again to finish (rows already copied are replaced, not duplicated).`,
    );
  } finally {
    await store?.close().catch(() => undefined);
    await pool?.end().catch(() => undefined);
    await source.close();
  }
}

/** One line per table at most every second, and one when it is done: rows done / total, rows/s. */
function progressReporter(): CopyProgress {
  return {
    start(table, total) {
      const startedMs = performance.now();
      let done = 0;
      let lastMs = startedMs;
      const line = () => {
        const seconds = (performance.now() - startedMs) / 1000;
        const rate = seconds > 0 ? Math.round(done / seconds) : 0;
        const share = total > 0 ? ` (${Math.floor((100 * done) / total)}%)` : '';
        process.stderr.write(`migrate: ${table} ${done} / ${total} rows${share}, ${rate} rows/s\n`);
      };
      return {
        add(rows) {
          done += rows;
          const now = performance.now();
          if (now - lastMs >= 1000 && done < total) {
            lastMs = now;
            line();
          }
        },
        finish() {
          line();
          return { rows: done, seconds: (performance.now() - startedMs) / 1000 };
        },
      };
    },
  };
}
