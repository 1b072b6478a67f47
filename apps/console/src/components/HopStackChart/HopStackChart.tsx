import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { ATTRIBUTION_HOP_KEYS } from '@governor/conventions';
import { formatMs, formatPercent } from '../../lib/format.ts';
import { HOP_COLORS, type HopSegment, hopLabel } from '../../lib/hops.ts';

export interface HopStackRow {
  label: string;
  segments: HopSegment[];
}

/** One horizontal bar per pool, split into hops, so the widest segment (the bottleneck) stands out. */
export function HopStackChart({
  rows,
  onSelect,
}: {
  rows: HopStackRow[];
  onSelect?: (label: string) => void;
}) {
  const hops = ATTRIBUTION_HOP_KEYS.filter((hop) => rows.some((r) => r.segments.some((s) => s.hop === hop)));
  const data = rows.map((row) => {
    const out: Record<string, string | number> = { label: row.label };
    for (const s of row.segments) {
      out[s.hop] = Number(s.ms.toFixed(2));
      out[`${s.hop}__share`] = s.share ?? 0;
    }
    return out;
  });
  const height = Math.max(140, rows.length * 44 + 70);
  const labelWidth = Math.min(200, Math.max(60, ...rows.map((r) => r.label.length * 7 + 12)));
  return (
    <div className="chart" role="img" aria-label="Latency by hop per pool" style={{ height }}>
      <ResponsiveContainer width="100%" height="100%">
        <BarChart
          data={data}
          layout="vertical"
          margin={{ top: 4, right: 16, bottom: 0, left: 8 }}
          onClick={
            onSelect
              ? (state) => {
                  const row = data[Number(state.activeTooltipIndex)];
                  if (row) onSelect(String(row.label));
                }
              : undefined
          }
          style={onSelect ? { cursor: 'pointer' } : undefined}
        >
          <CartesianGrid strokeDasharray="3 3" stroke="var(--grid)" horizontal={false} />
          <XAxis
            type="number"
            tickFormatter={(v: number) => formatMs(v)}
            tick={{ fontSize: 11, fill: 'var(--muted)' }}
          />
          <YAxis
            type="category"
            dataKey="label"
            width={labelWidth}
            tick={{ fontSize: 12, fill: 'var(--text)' }}
          />
          <Tooltip
            isAnimationActive={false}
            contentStyle={{ fontSize: 12 }}
            formatter={(value, name, item) => {
              const share = (item.payload as Record<string, number>)[`${String(name)}__share`];
              return [
                `${formatMs(Number(value))} (${formatPercent(share ?? null, 0)})`,
                hopLabel(String(name)),
              ];
            }}
          />
          <Legend
            wrapperStyle={{ fontSize: 12 }}
            formatter={(value) => hopLabel(String(value))}
            itemSorter={null}
          />
          {hops.map((hop) => (
            <Bar key={hop} dataKey={hop} stackId="hops" fill={HOP_COLORS[hop]} isAnimationActive={false} />
          ))}
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}
