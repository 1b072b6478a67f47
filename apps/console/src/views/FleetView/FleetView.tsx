import { UTILIZATION_BOUNDS } from '@governor/conventions';
import { fetchSignals } from '../../api/signals.ts';
import { FleetTable } from '../../components/FleetTable/index.ts';
import { Panel } from '../../components/Panel/index.ts';
import { PoolFilter } from '../../components/PoolFilter/index.ts';
import { SignalSeriesPanel } from '../../components/SignalSeriesPanel/index.ts';
import { StatTiles } from '../../components/StatTiles/index.ts';
import { AsyncContent, EmptyState } from '../../components/StateView/index.ts';
import { formatMs, formatNumber, formatPercent, formatUsd } from '../../lib/format.ts';
import { poolName, readSlo } from '../../lib/pool-state.ts';
import { useTimeRange } from '../../lib/time-context.tsx';
import { useApi } from '../../lib/use-api.ts';
import { useUrlParams } from '../../lib/url-state.ts';

export function FleetView() {
  const [params, setParams] = useUrlParams();
  const { range, refreshOptions, pending } = useTimeRange();
  const pool = params.pool ?? null;
  const rangeKey = JSON.stringify([range.key, range.key === 'custom' ? range : null]);
  const byPool = useApi(
    pending ? null : `fleet-by-pool ${rangeKey}`,
    (signal) => fetchSignals(range, 'pool,gpu_type', signal),
    refreshOptions,
  );
  const fleet = useApi(
    pending ? null : `fleet-total ${rangeKey}`,
    (signal) => fetchSignals(range, '', signal),
    refreshOptions,
  );
  const slo = readSlo(byPool.data ?? fleet.data);
  const pools = (byPool.data?.groups ?? []).map(poolName);

  return (
    <div className="view" data-testid="view-fleet">
      <div className="filters">
        <PoolFilter pools={pools} value={pool} onChange={(value) => setParams({ pool: value })} />
      </div>
      <AsyncContent state={fleet} isEmpty={(d) => (d.groups[0]?.requests ?? 0) === 0} empty={null}>
        {(data) => {
          const g = data.groups[0]!;
          return (
            <StatTiles
              testId="fleet-kpis"
              tiles={[
                {
                  label: 'Requests',
                  value: formatNumber(g.requests),
                  hint: `${formatNumber(g.tasks)} tasks`,
                },
                {
                  label: 'TTFT p95',
                  value: formatMs(g.ttftMs.p95),
                  tone: slo.ttftMs !== null && (g.ttftMs.p95 ?? 0) > slo.ttftMs ? 'bad' : 'neutral',
                  hint: slo.ttftMs !== null ? `SLO ${formatMs(slo.ttftMs)}` : `p50 ${formatMs(g.ttftMs.p50)}`,
                },
                {
                  label: 'e2e p95',
                  value: formatMs(g.e2eMs.p95),
                  tone: slo.e2eMs !== null && (g.e2eMs.p95 ?? 0) > slo.e2eMs ? 'bad' : 'neutral',
                  hint: slo.e2eMs !== null ? `SLO ${formatMs(slo.e2eMs)}` : `p50 ${formatMs(g.e2eMs.p50)}`,
                },
                {
                  label: 'Goodput',
                  value: formatPercent(g.goodput),
                  hint: `errors ${formatPercent(g.errorRate)}`,
                },
                {
                  label: 'Success per $',
                  value: formatNumber(g.successPerDollar),
                  hint: `${formatUsd(g.costPerSuccessfulTaskUsd)} per successful task`,
                },
                {
                  label: 'Fleet cost',
                  value: formatUsd(g.costUsd),
                  hint: `${formatNumber(g.replicas)} replicas`,
                },
              ]}
            />
          );
        }}
      </AsyncContent>
      <Panel
        title="Pools"
        subtitle={`${range.label} · select a pool to focus the charts`}
        testId="fleet-pools"
      >
        <AsyncContent
          state={byPool}
          isEmpty={(d) => d.groups.length === 0}
          empty={
            <EmptyState title="No pools have reported in this time range">
              Point an OpenTelemetry exporter at <code>/v1/traces</code> (or run{' '}
              <code>pnpm governor sim</code>) and the pools appear here.
            </EmptyState>
          }
        >
          {(data) => (
            <FleetTable
              groups={data.groups}
              slo={slo}
              selectedPool={pool}
              onSelectPool={(value) => setParams({ pool: value })}
            />
          )}
        </AsyncContent>
      </Panel>
      <div className="grid grid--2">
        <SignalSeriesPanel
          title="TTFT p95"
          subtitle="start of request → first token"
          signal="ttftMs.p95"
          pool={pool}
          unit="ms"
          threshold={slo.ttftMs !== null ? { value: slo.ttftMs, label: `SLO ${formatMs(slo.ttftMs)}` } : null}
          testId="chart-ttft"
        />
        <SignalSeriesPanel
          title="End-to-end latency p95"
          subtitle="root span duration"
          signal="e2eMs.p95"
          pool={pool}
          unit="ms"
          threshold={slo.e2eMs !== null ? { value: slo.e2eMs, label: `SLO ${formatMs(slo.e2eMs)}` } : null}
          testId="chart-e2e"
        />
        <SignalSeriesPanel
          title="Utilization ratio"
          subtitle={`memory ÷ compute · above ${UTILIZATION_BOUNDS.memoryAbove} memory-bound, below ${UTILIZATION_BOUNDS.computeBelow} compute-bound`}
          signal="utilizationRatio"
          pool={pool}
          decimals={2}
          threshold={[
            {
              value: UTILIZATION_BOUNDS.memoryAbove,
              label: `memory-bound above ${UTILIZATION_BOUNDS.memoryAbove}`,
            },
            {
              value: UTILIZATION_BOUNDS.computeBelow,
              label: `compute-bound below ${UTILIZATION_BOUNDS.computeBelow}`,
            },
          ]}
          testId="chart-utilization"
        />
        <SignalSeriesPanel
          title="Success per dollar"
          subtitle="successful tasks ÷ fleet cost"
          signal="successPerDollar"
          pool={pool}
          decimals={1}
          testId="chart-spd"
        />
      </div>
    </div>
  );
}
