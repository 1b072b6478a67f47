import type { SignalGroup } from '@governor/conventions';
import { formatNumber, formatPercent, formatUsd } from '../../lib/format.ts';
import { hrefFor } from '../../lib/url-state.ts';

/** Success per dollar and cost per successful task, one row per tenant or workflow type. */
export function CostTable({
  groups,
  dimension,
  label,
}: {
  groups: SignalGroup[];
  dimension: string;
  label: string;
}) {
  const rows = [...groups].sort((a, b) => (b.costUsd ?? 0) - (a.costUsd ?? 0));
  const maxCostPerTask = Math.max(0, ...rows.map((g) => g.costPerSuccessfulTaskUsd ?? 0));
  return (
    <div className="table-wrap">
      <table className="table" data-testid={`cost-table-${dimension}`}>
        <thead>
          <tr>
            <th scope="col">{label}</th>
            <th scope="col" className="num">
              Tasks
            </th>
            <th scope="col" className="num">
              Succeeded
            </th>
            <th scope="col" className="num">
              Success / $
            </th>
            <th scope="col">Cost per successful task</th>
            <th scope="col" className="num">
              Cost
            </th>
            <th scope="col" className="num">
              Retry ratio
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((g) => {
            const name = g.key[dimension as keyof typeof g.key];
            const failed = g.tasks - g.successfulTasks;
            const perTask = g.costPerSuccessfulTaskUsd;
            return (
              <tr key={String(name)}>
                <th scope="row">
                  {dimension === 'tenant' && name !== null && name !== undefined ? (
                    <a
                      href={hrefFor({ view: 'traces', tenant: String(name) })}
                      title={`Traces of ${String(name)}`}
                    >
                      {String(name)}
                    </a>
                  ) : name === null || name === undefined ? (
                    '(none)'
                  ) : (
                    String(name)
                  )}
                </th>
                <td className="num">{formatNumber(g.tasks)}</td>
                <td className="num">
                  {formatPercent(g.tasks > 0 ? g.successfulTasks / g.tasks : null)}
                  {failed > 0 ? <div className="cell-sub is-bad">{formatNumber(failed)} failed</div> : null}
                </td>
                <td className="num">{formatNumber(g.successPerDollar)}</td>
                <td>
                  <div className="bar-cell">
                    <span
                      className="bar-cell__bar"
                      style={{
                        width: `${maxCostPerTask > 0 && perTask ? (perTask / maxCostPerTask) * 100 : 0}%`,
                      }}
                    />
                    <span className="bar-cell__value">{formatUsd(perTask)}</span>
                  </div>
                </td>
                <td className="num">{formatUsd(g.costUsd)}</td>
                <td className="num">{formatPercent(g.retryRatio)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
