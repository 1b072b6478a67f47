import type { RetentionReport } from '@governor/store';
import { createStore, openClickHouseStore } from '@governor/store';
import { clickHouseStoreOf } from '@governor/conventions';
import { loadConfig } from '../load-config.ts';
import { retentionPolicyFrom } from '../retention/retention-scheduler.ts';
import { storeOptionsFrom } from '../store-options.ts';
import { type ParsedArgs, flagString } from './parse-args.ts';

export const RETENTION_USAGE = `usage:
  governor retention run [--config F] [--url URL]    ask the running Governor to run retention now (admin token in GOVERNOR_TOKEN)
  governor retention run --offline [--config F] [--data-dir D]
                                                     run it on a stopped Governor's data directory
                                                     (store.engine: clickhouse: on the cluster, dropping whole days)`;

/**
 * `governor retention run`: a running Governor owns its DuckDB file, so by default this asks it
 * over HTTP (POST /api/retention/run); `--offline` opens the data directory itself.
 */
export async function runRetentionCommand(args: ParsedArgs): Promise<number> {
  const [sub] = args.positional;
  if (sub !== 'run') {
    process.stderr.write(`${sub ? `unknown retention command "${sub}"\n` : ''}${RETENTION_USAGE}\n`);
    return 2;
  }
  const config = loadConfig(flagString(args, 'config'));
  let report: RetentionReport;
  if (args.flags.offline === true && config.store.engine === 'clickhouse') {
    const store = await openClickHouseStore({
      config: clickHouseStoreOf(config.store),
      env: process.env,
      readDeadlineMs: config.server.read_deadline_ms,
      maxQueuedRows: config.server.max_queued_spans,
    });
    try {
      report = await store.runRetention(retentionPolicyFrom(config));
    } finally {
      await store.close();
    }
  } else if (args.flags.offline === true) {
    const dataDir = flagString(args, 'data-dir') ?? config.server.data_dir;
    const store = await createStore(storeOptionsFrom(config.server, dataDir));
    try {
      report = await store.runRetention(retentionPolicyFrom(config));
    } finally {
      await store.close();
    }
  } else {
    const url = flagString(args, 'url') ?? `http://${config.server.host}:${config.server.http_port}`;
    const token = process.env.GOVERNOR_TOKEN;
    let response: Response;
    try {
      response = await fetch(`${url}/api/retention/run`, {
        method: 'POST',
        headers: token ? { authorization: `Bearer ${token}` } : {},
      });
    } catch (error) {
      process.stderr.write(
        `cannot reach Governor at ${url} (${(error as Error).message}); pass --url, or --offline to run on a stopped Governor's data directory\n`,
      );
      return 1;
    }
    const body = (await response.json()) as RetentionReport & { error?: { code: string; message: string } };
    if (!response.ok) {
      process.stderr.write(
        `retention run failed (${body.error?.code ?? response.status}): ${body.error?.message ?? ''}\n`,
      );
      return 1;
    }
    report = body;
  }
  for (const t of report.targets) {
    const detail =
      t.status === 'skipped'
        ? 'no TTL configured'
        : t.status === 'failed'
          ? `FAILED (${t.rowsExported} rows exported before the failing slice; its rows stay live): ${t.error}`
          : t.rowsExported === 0
            ? `nothing older than the cutoff${cutoff(t.cutoffNs)}`
            : `${t.rowsExported} rows exported to ${t.files.length} file${t.files.length === 1 ? '' : 's'} (${t.bytesExported} bytes) and deleted${cutoff(t.cutoffNs)}`;
    process.stdout.write(`${t.target.padEnd(14)} ${detail}\n`);
  }
  return report.targets.some((t) => t.status === 'failed') ? 1 : 0;
}

function cutoff(ns: string | null): string {
  return ns ? `; cutoff ${new Date(Number(BigInt(ns) / 1_000_000n)).toISOString()}` : '';
}
