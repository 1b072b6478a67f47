import type { RetentionRunSummary } from '../../api/storage.ts';
import { formatCount, formatDateTime } from '../../lib/format.ts';
import { nsToMs } from '../../lib/ns-to-ms.ts';
import { BreakableName } from '../BreakableName/index.ts';

const STATE_LABEL: Record<string, string> = {
  published: 'exported',
  committed: 'publishing',
  failed: 'failed',
};

/** The latest retention export per target: how it ended, how many rows moved to Parquet, and when. */
export function RetentionRunTable({ runs }: { runs: RetentionRunSummary[] }) {
  return (
    <div className="table-wrap">
      <table className="table table--compact" data-testid="retention-runs">
        <thead>
          <tr>
            <th scope="col">Data</th>
            <th scope="col">Result</th>
            <th scope="col">Finished</th>
            <th scope="col" className="hide-narrow">
              Rows older than
            </th>
          </tr>
        </thead>
        <tbody>
          {runs.map((r) => (
            <tr key={r.target} data-target={r.target}>
              <th scope="row" className="mono name-cell">
                <BreakableName name={r.target} />
              </th>
              <td className="cell-wrap">
                <span className={`badge badge--run-${r.state}`} data-col="result">
                  {STATE_LABEL[r.state] ?? r.state}
                </span>
                {r.state !== 'failed' || r.rowsExported > 0 ? (
                  <div className="cell-sub" data-col="rows-exported">
                    {formatCount(r.rowsExported)} {r.rowsExported === 1 ? 'row' : 'rows'}
                  </div>
                ) : null}
                {r.error ? <div className="cell-sub is-bad">{r.error}</div> : null}
              </td>
              <td>{formatDateTime(r.finishedAt)}</td>
              <td className="nowrap hide-narrow" title="event time; older rows were exported">
                {formatDateTime(r.cutoffNs === null ? null : nsToMs(r.cutoffNs))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
