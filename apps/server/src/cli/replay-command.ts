import {
  createEngineWorkReader,
  createRequestArrivalsReader,
  createPrefillSpeedReader,
  createReadyReplicasReader,
  isoToNs,
  nsToIso,
  runBacktest,
} from '@governor/control';
import { createSignals } from '@governor/signals';
import { createStore } from '@governor/store';
import { loadConfig } from '../load-config.ts';
import { storeOptionsFrom } from '../store-options.ts';
import { formatTable } from './format-table.ts';
import { type ParsedArgs, flagString } from './parse-args.ts';

export const REPLAY_USAGE =
  'governor replay --from T1 --to T2 [--config F] [--data-dir D] [--json]   (T: RFC 3339; default the last hour of data)';

/**
 * `governor replay`: runs the control loop over stored history — a dry-run tick every
 * control.interval_s from T1 to T2 with the configured policies — and reports what it would have
 * recommended, when and why. Reads the data directory directly, so stop the Governor that owns it
 * first (DuckDB allows one process per file).
 */
export async function runReplayCommand(args: ParsedArgs): Promise<number> {
  const config = loadConfig(flagString(args, 'config'));
  if (config.store.engine !== 'duckdb') {
    process.stderr.write(
      'governor replay reads an embedded store (store.engine: duckdb); it does not run on ClickHouse yet: copy the period into a DuckDB store or replay against a node started from one\n',
    );
    return 2;
  }
  const dataDir = flagString(args, 'data-dir');
  if (dataDir) config.server.data_dir = dataDir;
  const parseTime = (name: string): bigint | null | undefined => {
    const text = flagString(args, name);
    if (text === undefined) return undefined;
    return isoToNs(text);
  };
  const from = parseTime('from');
  const to = parseTime('to');
  if (from === null || to === null) {
    process.stderr.write(
      `--from and --to must be RFC 3339 times, e.g. 2024-01-01T00:00:00Z\nusage: ${REPLAY_USAGE}\n`,
    );
    return 2;
  }

  let store: Awaited<ReturnType<typeof createStore>>;
  try {
    store = await createStore(storeOptionsFrom(config.server));
  } catch (error) {
    process.stderr.write(
      `cannot open the data directory ${config.server.data_dir}: ${(error as Error).message}\n` +
        'If a Governor is running on it, stop it first or copy the directory (DuckDB allows one process per file).\n',
    );
    return 1;
  }
  try {
    const signals = createSignals(store, config);
    const watermark = await signals.watermarkNs();
    const toNs = to ?? watermark;
    if (toNs === null || toNs === undefined) {
      process.stderr.write(`no data in ${store.dataDir}: nothing to replay\n`);
      return 1;
    }
    const fromNs = from ?? toNs - 3_600_000_000_000n;
    if (fromNs >= toNs) {
      process.stderr.write(`--from (${nsToIso(fromNs)}) must be before --to (${nsToIso(toNs)})\n`);
      return 2;
    }
    const json = args.flags.json === true;
    const report = await runBacktest({
      config,
      signals,
      readReadyReplicas: createReadyReplicasReader(store),
      readPrefillSpeed: createPrefillSpeedReader(store),
      readEngineWork: createEngineWorkReader(store),
      readRequestArrivals: createRequestArrivalsReader(store),
      fromNs,
      toNs,
      onTick: (atNs, index, total) => {
        if (process.stderr.isTTY)
          process.stderr.write(`\r\x1b[2Ktick ${index + 1}/${total} at ${nsToIso(atNs)}`);
      },
    });
    if (process.stderr.isTTY) process.stderr.write('\r\x1b[2K');
    if (json) {
      process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      return 0;
    }
    process.stdout.write(
      `replayed ${report.ticks} ticks (every ${config.control.interval_s} s) from ${report.from} to ${report.to}: ${report.entries.length} decisions\n\n`,
    );
    if (report.entries.length > 0) {
      const rows = report.entries.map((e) => [
        e.at,
        e.decision,
        e.recommendation.kind,
        Object.entries(e.recommendation.target)
          .map(([k, v]) => `${k}=${v}`)
          .join(','),
        JSON.stringify(e.recommendation.action),
        e.recommendation.confidence,
        e.recommendation.policy ?? '-',
        e.recommendation.reason,
      ]);
      process.stdout.write(
        `${formatTable(['at', 'decision', 'kind', 'target', 'action', 'confidence', 'policy', 'why'], rows)}\n`,
      );
    }
    return 0;
  } finally {
    await store.close();
  }
}
