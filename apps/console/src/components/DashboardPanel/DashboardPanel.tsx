import type { DashboardPanel as DashboardPanelSpec } from '@governor/conventions';
import { type Series, fetchSeries } from '../../api/signals.ts';
import { type SqlResult, runSql } from '../../api/sql.ts';
import { formatWithUnit } from '../../lib/format.ts';
import { parseDurationMsSafe } from '../../lib/parse-duration.ts';
import { substituteRange } from '../../lib/substitute-range.ts';
import { useTimeRange } from '../../lib/time-context.tsx';
import { chooseStepMs, toIso } from '../../lib/time-range.ts';
import { useApi } from '../../lib/use-api.ts';
import { navigateTo } from '../../lib/url-state.ts';
import { Panel } from '../Panel/index.ts';
import { ResultChart } from '../ResultChart/index.ts';
import { ResultTable } from '../ResultTable/index.ts';
import { AsyncContent, EmptyState } from '../StateView/index.ts';
import { TableHead } from '../TableHead/index.ts';
import { TimeSeriesChart } from '../TimeSeriesChart/index.ts';

type PanelData = { type: 'sql'; result: SqlResult } | { type: 'signal'; series: Series[]; stepMs: number };

/** One panel of a dashboard file: runs its query over the selected range and draws it. */
export function DashboardPanel({
  dashboardId,
  index,
  panel,
}: {
  dashboardId: string;
  index: number;
  panel: DashboardPanelSpec;
}) {
  const { range, refreshOptions, pending } = useTimeRange();
  const options = panel.options ?? {};
  const query = panel.query;
  const stepMs =
    (query.type === 'signal' ? parseDurationMsSafe(query.step) : null) ??
    chooseStepMs(range.toMs - range.fromMs);
  const key = pending
    ? null
    : JSON.stringify([dashboardId, index, query, range.key, range.key === 'custom' ? range : null]);
  const state = useApi<PanelData>(
    key,
    async (signal) => {
      if (query.type === 'sql') {
        const sql = substituteRange(query.sql, { ...range, stepMs });
        return { type: 'sql', result: await runSql(sql, { limit: query.limit ?? 5000, signal }) };
      }
      const result = await fetchSeries(
        { signal: query.signal, by: query.by ?? '', fromMs: range.fromMs, toMs: range.toMs, stepMs },
        signal,
      );
      return { type: 'signal', series: result.series, stepMs: result.stepMs ?? stepMs };
    },
    refreshOptions,
  );
  const threshold =
    options.threshold !== undefined
      ? { value: options.threshold, label: options.thresholdLabel ?? String(options.threshold) }
      : null;
  return (
    <Panel
      title={panel.title}
      subtitle={panel.description}
      className={`panel--${panel.width}`}
      testId="dashboard-panel"
    >
      <AsyncContent
        state={state}
        isEmpty={(d) =>
          d.type === 'sql'
            ? d.result.rows.length === 0
            : d.series.every((s) => s.points.every((p) => p.value === null))
        }
        empty={<EmptyState title="No data in this time range" />}
      >
        {(data) => {
          if (data.type === 'sql') {
            if (panel.chart === 'table') return <ResultTable result={data.result} maxRows={200} />;
            if (panel.chart === 'stat')
              return (
                <StatValue
                  value={firstNumber(data.result, options.y?.[0])}
                  unit={options.unit}
                  decimals={options.decimals}
                />
              );
            return (
              <ResultChart
                result={data.result}
                spec={{ x: options.x, y: options.y, series: options.series }}
                kind={panel.chart}
                threshold={threshold}
                title={panel.title}
                range={range}
                {...(options.unit !== undefined ? { unit: options.unit } : {})}
                {...(options.decimals !== undefined ? { decimals: options.decimals } : {})}
              />
            );
          }
          if (panel.chart === 'stat') {
            const last = data.series
              .flatMap((s) => s.points.filter((p) => p.value !== null))
              .sort((a, b) => b.t - a.t)[0];
            return <StatValue value={last?.value ?? null} unit={options.unit} decimals={options.decimals} />;
          }
          if (panel.chart === 'table')
            return <SeriesTable series={data.series} unit={options.unit} decimals={options.decimals} />;
          return (
            <TimeSeriesChart
              series={data.series}
              fromMs={range.fromMs}
              toMs={range.toMs}
              kind={panel.chart === 'stacked-bar' ? 'bar' : panel.chart}
              stacked={panel.chart === 'stacked-bar'}
              threshold={threshold}
              ariaLabel={panel.title}
              {...(options.unit !== undefined ? { unit: options.unit } : {})}
              {...(options.decimals !== undefined ? { decimals: options.decimals } : {})}
              onPointClick={(t) =>
                navigateTo({ view: 'traces', tfrom: toIso(t), tto: toIso(t + data.stepMs) })
              }
            />
          );
        }}
      </AsyncContent>
    </Panel>
  );
}

function firstNumber(result: SqlResult, column: string | undefined): number | null {
  const row = result.rows[0];
  if (!row) return null;
  const index = column
    ? result.columns.findIndex((c) => c.name === column)
    : row.findIndex((v) => typeof v === 'number');
  const value = index >= 0 ? row[index] : null;
  return typeof value === 'number' ? value : value === null || value === undefined ? null : Number(value);
}

function StatValue({
  value,
  unit,
  decimals,
}: {
  value: number | null;
  unit: string | undefined;
  decimals: number | undefined;
}) {
  return (
    <div className="stat-value" data-testid="stat-value">
      {formatWithUnit(value, unit, decimals)}
    </div>
  );
}

function SeriesTable({
  series,
  unit,
  decimals,
}: {
  series: Series[];
  unit: string | undefined;
  decimals: number | undefined;
}) {
  return (
    <div className="table-wrap">
      <table className="table table--compact">
        <TableHead
          columns={['Series', { label: 'Latest', numeric: true }, { label: 'Max', numeric: true }]}
        />
        <tbody>
          {series.map((s) => {
            const values = s.points.map((p) => p.value).filter((v): v is number => v !== null);
            return (
              <tr key={s.label}>
                <th scope="row">{s.label}</th>
                <td className="num">{formatWithUnit(values[values.length - 1] ?? null, unit, decimals)}</td>
                <td className="num">
                  {formatWithUnit(values.length ? Math.max(...values) : null, unit, decimals)}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
