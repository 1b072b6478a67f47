import {
  Area,
  AreaChart,
  Bar,
  BarChart,
  CartesianGrid,
  Legend,
  Line,
  LineChart,
  ReferenceLine,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';
import type { Series } from '../../api/signals.ts';
import { pivotSeries } from '../../api/signals.ts';
import { formatWithUnit } from '../../lib/format.ts';
import { pickColor } from './chart-colors.ts';

export interface TimeSeriesChartProps {
  series: Series[];
  fromMs: number;
  toMs: number;
  unit?: string;
  decimals?: number;
  kind?: 'line' | 'area' | 'bar';
  stacked?: boolean;
  /** Horizontal reference lines, e.g. the SLO. */
  threshold?: { value: number; label: string } | { value: number; label: string }[] | null;
  /** A vertical marker, e.g. when a recommendation was proposed. */
  marker?: { t: number; label: string } | null;
  /** Fixed colours by series label (e.g. hop colours); others get the palette. */
  colors?: Record<string, string>;
  height?: number;
  /** Called with the clicked bucket's start time (ms); the chart shows a pointer cursor. */
  onPointClick?: (tMs: number) => void;
  ariaLabel: string;
}

function formatTick(ms: number, spanMs: number): string {
  const d = new Date(ms);
  if (spanMs > 2 * 86_400_000) return d.toLocaleDateString([], { month: 'short', day: 'numeric' });
  if (spanMs > 3 * 3_600_000) return d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  return d.toLocaleTimeString([], {
    hour: '2-digit',
    minute: '2-digit',
    second: spanMs < 600_000 ? '2-digit' : undefined,
  });
}

/** Time on x fixed to the selected range (gaps stay visible), one line/area/bar per series. */
export function TimeSeriesChart({
  series,
  fromMs,
  toMs,
  unit,
  decimals,
  kind = 'line',
  stacked = false,
  threshold,
  marker,
  colors,
  height = 220,
  onPointClick,
  ariaLabel,
}: TimeSeriesChartProps) {
  const { rows, labels } = pivotSeries(series);
  const spanMs = toMs - fromMs;
  const format = (v: unknown) => formatWithUnit(typeof v === 'number' ? v : null, unit, decimals);
  const common = {
    data: rows,
    margin: { top: 8, right: 16, bottom: 0, left: 4 },
    onClick: onPointClick
      ? (state: { activeTooltipIndex?: number | string | null | undefined; isTooltipActive?: boolean }) => {
          // Only a point the tooltip is showing: a click without a hovered point means nothing.
          if (state.isTooltipActive === false) return;
          const index = Number(state.activeTooltipIndex);
          const row = Number.isInteger(index) ? rows[index] : undefined;
          if (row && typeof row.t === 'number') onPointClick(row.t);
        }
      : undefined,
    style: onPointClick ? { cursor: 'pointer' } : undefined,
  };
  const thresholds = threshold ? (Array.isArray(threshold) ? threshold : [threshold]) : [];
  const colorOf = (label: string, i: number) => colors?.[label] ?? pickColor(i);
  const axes = [
    <CartesianGrid key="grid" strokeDasharray="3 3" stroke="var(--grid)" vertical={false} />,
    <XAxis
      key="x"
      dataKey="t"
      type="number"
      scale="time"
      domain={[fromMs, toMs]}
      allowDataOverflow
      tickFormatter={(v: number) => formatTick(v, spanMs)}
      tick={{ fontSize: 11, fill: 'var(--muted)' }}
      minTickGap={24}
    />,
    <YAxis
      key="y"
      width={64}
      tick={{ fontSize: 11, fill: 'var(--muted)' }}
      tickFormatter={(v: number) => format(v)}
      // Reference lines extend the domain themselves (ifOverflow="extendDomain"); ticks stay round.
      domain={[0, 'auto']}
      allowDecimals
    />,
    <Tooltip
      key="tooltip"
      labelFormatter={(v) => new Date(Number(v)).toLocaleString()}
      formatter={(v) => format(v)}
      contentStyle={{ fontSize: 12 }}
      isAnimationActive={false}
    />,
    labels.length > 1 ? (
      <Legend key="legend" wrapperStyle={{ fontSize: 12 }} iconType="plainline" itemSorter={null} />
    ) : null,
    ...thresholds.map((t) => (
      <ReferenceLine
        key={`threshold-${t.value}`}
        y={t.value}
        stroke="var(--danger)"
        strokeDasharray="6 4"
        ifOverflow="extendDomain"
        label={{ value: t.label, position: 'insideTopRight', fill: 'var(--danger)', fontSize: 11 }}
      />
    )),
    marker ? (
      <ReferenceLine
        key="marker"
        x={marker.t}
        stroke="var(--text)"
        strokeDasharray="2 3"
        label={{ value: marker.label, position: 'insideTopLeft', fill: 'var(--muted)', fontSize: 11 }}
      />
    ) : null,
  ];
  let chart: React.ReactElement;
  if (kind === 'area') {
    chart = (
      <AreaChart {...common}>
        {axes}
        {labels.map((label, i) => (
          <Area
            key={label}
            type="linear"
            dataKey={label}
            stackId={stacked ? 'stack' : undefined}
            stroke={colorOf(label, i)}
            fill={colorOf(label, i)}
            fillOpacity={stacked ? 0.7 : 0.15}
            connectNulls={false}
            isAnimationActive={false}
          />
        ))}
      </AreaChart>
    );
  } else if (kind === 'bar') {
    chart = (
      <BarChart {...common}>
        {axes}
        {labels.map((label, i) => (
          <Bar
            key={label}
            dataKey={label}
            stackId={stacked ? 'stack' : undefined}
            fill={colorOf(label, i)}
            isAnimationActive={false}
          />
        ))}
      </BarChart>
    );
  } else {
    chart = (
      <LineChart {...common}>
        {axes}
        {labels.map((label, i) => (
          <Line
            key={label}
            type="linear"
            dataKey={label}
            stroke={colorOf(label, i)}
            strokeWidth={2}
            dot={rows.length < 3}
            connectNulls={false}
            isAnimationActive={false}
          />
        ))}
      </LineChart>
    );
  }
  return (
    <div className="chart" role="img" aria-label={ariaLabel} style={{ height }}>
      <ResponsiveContainer width="100%" height="100%">
        {chart}
      </ResponsiveContainer>
    </div>
  );
}
