import type { GovernorConfig } from '@governor/conventions';
import { isSignalPath } from '@governor/conventions';
import { MAX_SERIES_POINTS, type Signals } from '@governor/signals';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { GovernorError } from '../errors.ts';
import { withSpan } from '../observability/self-tracing-spans.ts';
import {
  DimensionFilter,
  ERROR_RESPONSES,
  GroupBy,
  dimensionFilter,
  optionalEventTime,
} from './http-schemas.ts';
import { parseWindowMs } from './signals-query.ts';
import { SignalSeries, SignalsSnapshot } from './signals-schemas.ts';
import { govParse, useZodSchemas } from './zod-validation.ts';

export interface SignalsPluginOptions {
  signals: Signals;
  config: GovernorConfig;
}

const DEFAULT_SERIES_RANGE_NS = 3_600_000_000_000n;

/** GET /api/signals and GET /api/signals/series (docs/api.md). */
export async function signalsPlugin(app: FastifyInstance, options: SignalsPluginOptions): Promise<void> {
  useZodSchemas(app);
  const { signals, config } = options;
  const api = app.withTypeProvider<ZodTypeProvider>();
  const defaultWindow = config.signals.default_window;

  api.get(
    '/api/signals',
    {
      schema: {
        summary: 'The four signals over one window, grouped',
        description:
          'TTFT, end-to-end latency, utilization ratio and success per dollar (with their supporting figures) over the window ending at `at`, one group per value of the `by` dimensions. A field without data is null, never 0.',
        tags: ['signals'],
        querystring: z.strictObject({
          window: z
            .string()
            .optional()
            .describe(`Window length ending at \`at\`, e.g. 5m (at most 7d). Default ${defaultWindow}.`)
            .transform(govParse((t: string | undefined) => parseWindowMs(t, 'window', defaultWindow))),
          by: GroupBy,
          at: optionalEventTime('at', 'Event time the window ends at. Default: the watermark.'),
          ...DimensionFilter,
        }),
        response: { 200: SignalsSnapshot, ...ERROR_RESPONSES },
      },
    },
    async (request) => {
      const { window: windowMs, by, at: atNs, ...filter } = request.query;
      return withSpan('governor.signals.snapshot', { 'governor.signals.window_ms': windowMs }, () =>
        signals.snapshot({
          windowMs,
          by,
          filter: dimensionFilter(filter),
          ...(atNs === undefined ? {} : { atNs }),
        }),
      );
    },
  );

  api.get(
    '/api/signals/series',
    {
      schema: {
        summary: 'One signal as a time series, for charts',
        description: `One value per whole step from \`from\` (at most ${MAX_SERIES_POINTS} steps), one series per group, up to \`to\` or the watermark, whichever is earlier: a step that ends after the watermark is still filling and is left out.`,
        tags: ['signals'],
        querystring: z.strictObject({
          signal: z
            .string()
            .optional()
            .describe(
              'Dotted path into a signal group: ttftMs.p95, errorRate, successPerDollar, hops.queue.p95, …',
            )
            .transform(
              govParse((signal: string | undefined) => {
                if (signal === undefined || !isSignalPath(signal)) {
                  throw new GovernorError(
                    'GOV_ERR_SIGNALS_UNKNOWN_SIGNAL',
                    `signal: "${signal ?? ''}" is not a signal; use a dotted path into a signal group such as ttftMs.p95, errorRate, successPerDollar or hops.queue.p95`,
                  );
                }
                return signal;
              }),
            ),
          by: GroupBy,
          from: optionalEventTime('from', 'Start of the range. Default: one hour before `to`.'),
          to: optionalEventTime('to', 'End of the range. Default: the watermark; points never pass it.'),
          step: z.string().optional().describe('Step, e.g. 1m (at most 7d). Default 1m.'),
          ...DimensionFilter,
        }),
        response: { 200: SignalSeries, ...ERROR_RESPONSES },
      },
    },
    // The watermark and the series are one read: one read deadline for both.
    async (request) =>
      signals.read(async () => {
        const { signal, by, from, to, step, ...filter } = request.query;
        const stepMs = parseWindowMs(step, 'step', '1m');
        const toNs = to ?? (await signals.watermarkNs()) ?? BigInt(Date.now()) * 1_000_000n;
        const fromNs = from ?? toNs - DEFAULT_SERIES_RANGE_NS;
        if (fromNs >= toNs) throw new GovernorError('GOV_ERR_SIGNALS_BAD_TIME', '`from` must be before `to`');
        const points = (toNs - fromNs + BigInt(stepMs) * 1_000_000n - 1n) / (BigInt(stepMs) * 1_000_000n);
        if (points > BigInt(MAX_SERIES_POINTS)) {
          throw new GovernorError(
            'GOV_ERR_SIGNALS_TOO_MANY_POINTS',
            `from…to holds ${points} steps of ${step ?? '1m'}; at most ${MAX_SERIES_POINTS} are allowed — use a larger step or a shorter range`,
          );
        }
        return withSpan(
          'governor.signals.series',
          { 'governor.signals.signal': signal, 'governor.signals.step_ms': stepMs },
          () => signals.series({ signal, by, fromNs, toNs, stepMs, filter: dimensionFilter(filter) }),
        );
      }),
  );
}
