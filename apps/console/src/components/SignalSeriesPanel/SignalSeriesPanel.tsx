import { fetchSeries } from '../../api/signals.ts';
import { chooseStepMs, toIso } from '../../lib/time-range.ts';
import { useTimeRange } from '../../lib/time-context.tsx';
import { useApi } from '../../lib/use-api.ts';
import { hrefFor, navigateTo } from '../../lib/url-state.ts';
import { Panel } from '../Panel/index.ts';
import { AsyncContent, EmptyState } from '../StateView/index.ts';
import { TimeSeriesChart } from '../TimeSeriesChart/index.ts';

export interface SignalSeriesPanelProps {
  title: string;
  subtitle?: string;
  /** Series name of GET /api/signals/series, e.g. `ttftMs.p95`. */
  signal: string;
  by?: string;
  /** Only this pool's series (client-side filter over by=pool). */
  pool?: string | null;
  unit?: string;
  decimals?: number;
  kind?: 'line' | 'area' | 'bar';
  stacked?: boolean;
  threshold?: { value: number; label: string } | { value: number; label: string }[] | null;
  stepMs?: number;
  testId?: string;
}

/** A signal over the selected range, one series per group; clicking a point opens its traces. */
export function SignalSeriesPanel({
  title,
  subtitle,
  signal,
  by = 'pool',
  pool = null,
  unit,
  decimals,
  kind = 'line',
  stacked,
  threshold,
  stepMs,
  testId,
}: SignalSeriesPanelProps) {
  const { range, refreshOptions, pending } = useTimeRange();
  const step = stepMs ?? chooseStepMs(range.toMs - range.fromMs);
  const key = pending
    ? null
    : JSON.stringify([signal, by, range.key, range.key === 'custom' ? range : null, step]);
  const state = useApi(
    key,
    (abort) => fetchSeries({ signal, by, fromMs: range.fromMs, toMs: range.toMs, stepMs: step }, abort),
    refreshOptions,
  );
  const tracesHref = hrefFor({ view: 'traces', tfrom: toIso(range.fromMs), tto: toIso(range.toMs) });
  return (
    <Panel
      title={title}
      subtitle={subtitle}
      testId={testId}
      actions={
        <a className="small-link" href={tracesHref}>
          Traces
        </a>
      }
    >
      <AsyncContent
        state={state}
        isEmpty={(data) => {
          const visible = pool ? data.series.filter((s) => String(s.key.pool) === pool) : data.series;
          return visible.every((s) => s.points.every((p) => p.value === null));
        }}
        empty={
          <EmptyState title="No data in this time range">
            Send traces to Governor or pick a wider range.
          </EmptyState>
        }
      >
        {(data) => (
          <TimeSeriesChart
            series={pool ? data.series.filter((s) => String(s.key.pool) === pool) : data.series}
            fromMs={range.fromMs}
            toMs={range.toMs}
            kind={kind}
            ariaLabel={`${title} over time`}
            {...(unit !== undefined ? { unit } : {})}
            {...(decimals !== undefined ? { decimals } : {})}
            {...(stacked !== undefined ? { stacked } : {})}
            threshold={threshold ?? null}
            onPointClick={(t) =>
              navigateTo({
                view: 'traces',
                tfrom: toIso(t),
                tto: toIso(t + (data.stepMs ?? step)),
                pool: pool ?? null,
              })
            }
          />
        )}
      </AsyncContent>
    </Panel>
  );
}
