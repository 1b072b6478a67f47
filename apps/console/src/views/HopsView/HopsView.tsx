import { ATTRIBUTION_HOP_KEYS, type SignalGroup } from '@governor/conventions';
import { useId } from 'react';
import { type Series, fetchSeries, fetchSignals } from '../../api/signals.ts';
import { HopStackChart } from '../../components/HopStackChart/index.ts';
import { Panel } from '../../components/Panel/index.ts';
import { PoolFilter } from '../../components/PoolFilter/index.ts';
import { AsyncContent, EmptyState } from '../../components/StateView/index.ts';
import { TimeSeriesChart } from '../../components/TimeSeriesChart/index.ts';
import { ApiError } from '../../lib/api-client.ts';
import { formatMs, formatPercent } from '../../lib/format.ts';
import {
  HOP_COLORS,
  type HopBasis,
  computeHopSegments,
  findBottleneck,
  hopLabel,
  readHop,
  TTFT_HOPS,
} from '../../lib/hops.ts';
import { poolName } from '../../lib/pool-state.ts';
import { useTimeRange } from '../../lib/time-context.tsx';
import { chooseStepMs, toIso } from '../../lib/time-range.ts';
import { useApi } from '../../lib/use-api.ts';
import { hrefFor, navigateTo, useUrlParams } from '../../lib/url-state.ts';

const HOP_SERIES_COLORS = Object.fromEntries(
  ATTRIBUTION_HOP_KEYS.map((hop) => [hopLabel(hop), HOP_COLORS[hop]!]),
);

export function HopsView() {
  const [params, setParams] = useUrlParams();
  const { range, refreshOptions, pending } = useTimeRange();
  const pool = params.pool ?? null;
  const basis: HopBasis = params.basis === 'ttft' ? 'ttft' : 'e2e';
  const rangeKey = JSON.stringify([range.key, range.key === 'custom' ? range : null]);
  const snapshot = useApi(
    pending ? null : `hops ${rangeKey}`,
    (signal) => fetchSignals(range, 'pool', signal),
    refreshOptions,
  );
  const groups = snapshot.data?.groups ?? [];
  const pools = groups.map(poolName);

  return (
    <div className="view" data-testid="view-hops">
      <div className="filters">
        <PoolFilter pools={pools} value={pool} onChange={(value) => setParams({ pool: value })} />
        <BasisToggle
          value={basis}
          onChange={(value) => setParams({ basis: value === 'e2e' ? null : value })}
        />
      </div>
      <Panel
        title={basis === 'e2e' ? 'End-to-end latency by hop' : 'TTFT by hop'}
        subtitle="median request, split by where the time went · the longest segment is the bottleneck"
        testId="hops-by-pool"
        actions={
          <a className="small-link" href={hrefFor({ view: 'traces', minMs: null })}>
            Traces
          </a>
        }
      >
        <AsyncContent
          state={snapshot}
          isEmpty={(d) => d.groups.every((g) => computeHopSegments(g, basis).length === 0)}
          empty={
            <EmptyState title="No hop timings in this time range">
              Hops come from span names and <code>governor.hop</code> (gateway, router, cache, queue, prefill,
              decode, stream).
            </EmptyState>
          }
        >
          {(data) => {
            const visible = data.groups.filter((g) => !pool || poolName(g) === pool);
            return (
              <>
                <BottleneckList groups={visible} basis={basis} />
                <HopStackChart
                  rows={visible.map((g) => ({ label: poolName(g), segments: computeHopSegments(g, basis) }))}
                  onSelect={(label) => setParams({ pool: pool === label ? null : label })}
                />
                <HopTable groups={visible} />
              </>
            );
          }}
        </AsyncContent>
      </Panel>
      <HopsOverTime
        pool={pool}
        basis={basis}
        rangeKey={rangeKey}
        range={range}
        refreshOptions={refreshOptions}
        pending={pending}
      />
    </div>
  );
}

function BasisToggle({ value, onChange }: { value: HopBasis; onChange: (value: HopBasis) => void }) {
  const name = useId();
  return (
    <fieldset className="segmented">
      <legend className="visually-hidden">Latency to split</legend>
      {(['e2e', 'ttft'] as const).map((option) => (
        <label key={option} className={`segmented__option ${value === option ? 'is-active' : ''}`}>
          <input
            type="radio"
            name={name}
            value={option}
            checked={value === option}
            onChange={() => onChange(option)}
          />
          {option === 'e2e' ? 'End-to-end' : 'TTFT'}
        </label>
      ))}
    </fieldset>
  );
}

function BottleneckList({ groups, basis }: { groups: SignalGroup[]; basis: HopBasis }) {
  return (
    <ul className="bottlenecks" data-testid="bottlenecks">
      {groups.map((g) => {
        const top = findBottleneck(computeHopSegments(g, basis));
        if (!top) return null;
        return (
          <li key={poolName(g)}>
            <strong>{poolName(g)}</strong>: bottleneck{' '}
            <span className="hop-chip" style={{ borderColor: HOP_COLORS[top.hop] }}>
              {hopLabel(top.hop)}
            </span>{' '}
            {formatMs(top.ms)} ({formatPercent(top.share, 0)} of {basis === 'e2e' ? 'e2e' : 'TTFT'})
          </li>
        );
      })}
    </ul>
  );
}

function HopTable({ groups }: { groups: SignalGroup[] }) {
  const hops = ATTRIBUTION_HOP_KEYS.filter((hop) => groups.some((g) => readHop(g, hop)));
  return (
    <details className="details">
      <summary>p50 / p95 per hop</summary>
      <div className="table-wrap">
        <table className="table table--compact">
          <thead>
            <tr>
              <th scope="col">Pool</th>
              {hops.map((hop) => (
                <th key={hop} scope="col" className="num">
                  {hopLabel(hop)}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {groups.map((g) => (
              <tr key={poolName(g)}>
                <th scope="row">{poolName(g)}</th>
                {hops.map((hop) => (
                  <td key={hop} className="num">
                    {formatMs(readHop(g, hop)?.p50)} / {formatMs(readHop(g, hop)?.p95)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}

/** Each hop's p50 over time (stacked) for one pool or the whole fleet. */
function HopsOverTime({
  pool,
  basis,
  rangeKey,
  range,
  refreshOptions,
  pending,
}: {
  pool: string | null;
  basis: HopBasis;
  rangeKey: string;
  range: { fromMs: number; toMs: number };
  refreshOptions: { live: boolean; refreshOn: unknown[] };
  pending: boolean;
}) {
  const step = chooseStepMs(range.toMs - range.fromMs, 40);
  const state = useApi(
    pending ? null : `hops-over-time ${rangeKey} ${pool ?? ''} ${basis}`,
    async (abort) => {
      const results = await Promise.all(
        (basis === 'ttft' ? TTFT_HOPS : ATTRIBUTION_HOP_KEYS).map(async (hop): Promise<Series | null> => {
          try {
            const r = await fetchSeries(
              {
                signal: `hops.${hop}.p50`,
                by: pool ? 'pool' : '',
                fromMs: range.fromMs,
                toMs: range.toMs,
                stepMs: step,
              },
              abort,
            );
            const s = pool ? r.series.find((x) => String(x.key.pool) === pool) : r.series[0];
            if (!s || s.points.every((p) => p.value === null)) return null;
            return { ...s, key: { hop }, label: hopLabel(hop) };
          } catch (error) {
            // A hop the server has no series for is simply absent; a missing route is the view's error.
            if (error instanceof ApiError && error.status === 400) return null;
            throw error;
          }
        }),
      );
      return results.filter((s): s is Series => s !== null);
    },
    refreshOptions,
  );
  return (
    <Panel
      title={`Hop latency over time${pool ? ` · ${pool}` : ' · fleet'}`}
      subtitle={`p50 per hop, stacked${basis === 'ttft' ? ', hops before the first token' : ''} · click a point for the traces behind it`}
      testId="hops-over-time"
    >
      <AsyncContent
        state={state}
        isEmpty={(d) => d.length === 0}
        empty={<EmptyState title="No hop series in this time range" />}
      >
        {(series) => (
          <TimeSeriesChart
            series={series}
            fromMs={range.fromMs}
            toMs={range.toMs}
            unit="ms"
            kind="area"
            stacked
            colors={HOP_SERIES_COLORS}
            height={260}
            ariaLabel="Hop latency over time"
            onPointClick={(t) => navigateTo({ view: 'traces', tfrom: toIso(t), tto: toIso(t + step), pool })}
          />
        )}
      </AsyncContent>
    </Panel>
  );
}
