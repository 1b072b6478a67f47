import type { GovernorConfig } from '@governor/conventions';
import { GROUP_DIMENSIONS, isSignalPath } from '@governor/conventions';
import { MAX_SERIES_POINTS, type Signals } from '@governor/signals';
import type { FastifyInstance } from 'fastify';
import { GovernorError } from '../errors.ts';
import {
  parseDimensionFilter,
  parseGroupBy,
  parseOptionalTime,
  parseWindowMs,
  readQuery,
} from './signals-query.ts';

export interface SignalsPluginOptions {
  signals: Signals;
  config: GovernorConfig;
}

const SNAPSHOT_PARAMS = ['window', 'by', 'at', ...GROUP_DIMENSIONS];
const SERIES_PARAMS = ['signal', 'by', 'from', 'to', 'step', ...GROUP_DIMENSIONS];
const DEFAULT_SERIES_RANGE_NS = 3_600_000_000_000n;

/** GET /api/signals and GET /api/signals/series (DESIGN.md §5). */
export async function signalsPlugin(app: FastifyInstance, options: SignalsPluginOptions): Promise<void> {
  const { signals, config } = options;

  app.get('/api/signals', async (request) => {
    const query = readQuery(request.query, SNAPSHOT_PARAMS);
    const windowMs = parseWindowMs(query.window, 'window', config.signals.default_window);
    const by = parseGroupBy(query.by);
    const atNs = parseOptionalTime(query.at, 'at');
    return signals.snapshot({
      windowMs,
      by,
      filter: parseDimensionFilter(query),
      ...(atNs === undefined ? {} : { atNs }),
    });
  });

  app.get('/api/signals/series', async (request) => {
    const query = readQuery(request.query, SERIES_PARAMS);
    const signal = query.signal ?? '';
    if (!isSignalPath(signal)) {
      throw new GovernorError(
        'GOV_ERR_SIGNALS_UNKNOWN_SIGNAL',
        `signal: "${signal}" is not a signal; use a dotted path into a signal group such as ttftMs.p95, errorRate, successPerDollar or hops.queue.p95`,
      );
    }
    const by = parseGroupBy(query.by);
    const stepMs = parseWindowMs(query.step, 'step', '1m');
    const toNs =
      parseOptionalTime(query.to, 'to') ?? (await signals.watermarkNs()) ?? BigInt(Date.now()) * 1_000_000n;
    const fromNs = parseOptionalTime(query.from, 'from') ?? toNs - DEFAULT_SERIES_RANGE_NS;
    if (fromNs >= toNs) throw new GovernorError('GOV_ERR_SIGNALS_BAD_TIME', '`from` must be before `to`');
    const points = (toNs - fromNs + BigInt(stepMs) * 1_000_000n - 1n) / (BigInt(stepMs) * 1_000_000n);
    if (points > BigInt(MAX_SERIES_POINTS)) {
      throw new GovernorError(
        'GOV_ERR_SIGNALS_TOO_MANY_POINTS',
        `from…to holds ${points} steps of ${query.step ?? '1m'}; at most ${MAX_SERIES_POINTS} are allowed — use a larger step or a shorter range`,
      );
    }
    return signals.series({ signal, by, fromNs, toNs, stepMs, filter: parseDimensionFilter(query) });
  });
}
