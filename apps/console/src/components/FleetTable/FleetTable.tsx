import type { SignalGroup } from '@governor/conventions';
import { formatMs, formatNumber, formatPercent, formatRatio } from '../../lib/format.ts';
import {
  POOL_STATE_LABELS,
  type Slo,
  classifyUtilization,
  describePoolState,
  poolName,
} from '../../lib/pool-state.ts';

export interface FleetTableProps {
  groups: SignalGroup[];
  slo: Slo;
  selectedPool: string | null;
  onSelectPool: (pool: string | null) => void;
}

/** One row per pool: the four signals plus what an operator needs to judge them. */
export function FleetTable({ groups, slo, selectedPool, onSelectPool }: FleetTableProps) {
  const rows = [...groups].sort((a, b) => poolName(a).localeCompare(poolName(b)));
  return (
    <div className="table-wrap">
      <table className="table fleet-table" data-testid="fleet-table">
        <thead>
          <tr>
            <th scope="col">Pool</th>
            <th scope="col">GPU</th>
            <th scope="col" className="num">
              Replicas
            </th>
            <th scope="col" className="num">
              TTFT p95
            </th>
            <th scope="col" className="num">
              e2e p95
            </th>
            <th scope="col" className="num">
              Utilization
            </th>
            <th scope="col" className="num">
              Success / $
            </th>
            <th scope="col" className="num">
              Goodput
            </th>
            <th scope="col">State</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((group) => {
            const pool = poolName(group);
            const status = describePoolState(group, slo);
            const bound = classifyUtilization(group.utilizationRatio);
            const selected = selectedPool === pool;
            const ttftBreach = slo.ttftMs !== null && (group.ttftMs.p95 ?? 0) > slo.ttftMs;
            const e2eBreach = slo.e2eMs !== null && (group.e2eMs.p95 ?? 0) > slo.e2eMs;
            return (
              <tr key={pool} aria-selected={selected} className={selected ? 'is-selected' : undefined}>
                <th scope="row">
                  <button
                    type="button"
                    className="link-button"
                    onClick={() => onSelectPool(selected ? null : pool)}
                    aria-pressed={selected}
                    title={selected ? 'Show all pools' : `Show only ${pool}`}
                  >
                    {pool}
                  </button>
                  <div className="cell-sub">{formatNumber(group.requests)} req</div>
                </th>
                <td>{group.key.gpu_type ?? '—'}</td>
                <td className="num">{formatNumber(group.replicas)}</td>
                <td className={`num ${ttftBreach ? 'is-bad' : ''}`} data-col="ttft">
                  {formatMs(group.ttftMs.p95)}
                </td>
                <td className={`num ${e2eBreach ? 'is-bad' : ''}`} data-col="e2e">
                  {formatMs(group.e2eMs.p95)}
                </td>
                <td
                  className="num"
                  data-col="utilization"
                  title={`memory ${formatPercent(group.memoryUtil)} ÷ compute ${formatPercent(group.computeUtil)}`}
                >
                  <span data-part="ratio">{formatRatio(group.utilizationRatio)}</span>
                  {bound && bound !== 'balanced' ? (
                    <span className={`badge badge--${bound}`} data-testid="bound-label">
                      {bound}
                    </span>
                  ) : null}
                  <div className="cell-sub">
                    mem <span data-part="memory">{formatPercent(group.memoryUtil)}</span> · cmp{' '}
                    <span data-part="compute">{formatPercent(group.computeUtil)}</span>
                  </div>
                </td>
                <td className="num" data-col="success-per-dollar">
                  {formatNumber(group.successPerDollar)}
                </td>
                <td className="num">{formatPercent(group.goodput)}</td>
                <td>
                  <span className={`badge badge--${status.state}`} title={status.reasons.join('; ')}>
                    {POOL_STATE_LABELS[status.state]}
                  </span>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
