import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { SqlResult } from '../../api/sql.ts';
import { formatWithUnit } from '../../lib/format.ts';
import { type ChartSpec, resultToChart } from '../../lib/result-to-chart.ts';
import { EmptyState } from '../StateView/index.ts';
import { TimeSeriesChart, pickColor } from '../TimeSeriesChart/index.ts';

export interface ResultChartProps {
  result: SqlResult;
  spec?: ChartSpec;
  kind?: 'line' | 'area' | 'bar' | 'stacked-bar';
  unit?: string;
  decimals?: number;
  threshold?: { value: number; label: string } | null;
  height?: number;
  title: string;
  /** Time axis span (the selected range); default: the data's own span. */
  range?: { fromMs: number; toMs: number };
}

/** A SQL result as a time-series chart (time on x) or a bar chart (categories on x). */
export function ResultChart({
  result,
  spec,
  kind = 'line',
  unit,
  decimals,
  threshold,
  height = 240,
  title,
  range,
}: ResultChartProps) {
  const data = resultToChart(result, spec);
  if (data.kind === 'none') return <EmptyState title="Nothing to chart">{data.reason}</EmptyState>;
  const format = (v: unknown) => formatWithUnit(typeof v === 'number' ? v : null, unit, decimals);
  if (data.kind === 'time') {
    return (
      <TimeSeriesChart
        series={data.series}
        fromMs={range ? Math.min(range.fromMs, data.fromMs) : data.fromMs}
        toMs={range ? Math.max(range.toMs, data.toMs) : data.toMs}
        kind={kind === 'stacked-bar' ? 'bar' : kind}
        stacked={kind === 'stacked-bar' || kind === 'area'}
        height={height}
        threshold={threshold ?? null}
        ariaLabel={title}
        {...(unit !== undefined ? { unit } : {})}
        {...(decimals !== undefined ? { decimals } : {})}
      />
    );
  }
  return (
    <div className="chart" role="img" aria-label={title} style={{ height }}>
      <ResponsiveContainer width="100%" height="100%">
        <BarChart data={data.rows} margin={{ top: 8, right: 16, bottom: 0, left: 4 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="var(--grid)" vertical={false} />
          <XAxis dataKey={data.x} tick={{ fontSize: 11, fill: 'var(--muted)' }} interval="preserveStartEnd" />
          <YAxis
            width={64}
            tick={{ fontSize: 11, fill: 'var(--muted)' }}
            tickFormatter={(v: number) => format(v)}
          />
          <Tooltip formatter={(v) => format(v)} contentStyle={{ fontSize: 12 }} isAnimationActive={false} />
          {data.labels.length > 1 ? <Legend wrapperStyle={{ fontSize: 12 }} itemSorter={null} /> : null}
          {data.labels.map((label, i) => (
            <Bar
              key={label}
              dataKey={label}
              fill={pickColor(i)}
              stackId={kind === 'stacked-bar' ? 'stack' : undefined}
              isAnimationActive={false}
            />
          ))}
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}
