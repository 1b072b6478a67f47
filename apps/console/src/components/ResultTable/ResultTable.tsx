import type { SqlResult } from '../../api/sql.ts';
import { hrefFor } from '../../lib/url-state.ts';

function formatCell(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number')
    return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(6)));
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

const NUMERIC = /INT|DOUBLE|FLOAT|DECIMAL|REAL|NUMERIC/i;

export function ResultTable({ result, maxRows = 1000 }: { result: SqlResult; maxRows?: number }) {
  return (
    <div className="table-wrap table-wrap--results">
      <table className="table table--compact table--results" data-testid="result-table">
        <thead>
          <tr>
            {result.columns.map((c) => (
              <th key={c.name} scope="col" className={NUMERIC.test(c.type) ? 'num' : undefined}>
                {c.name}
                <div className="cell-sub">{c.type.toLowerCase()}</div>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {result.rows.slice(0, maxRows).map((row, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: result rows have no identity
            <tr key={i}>
              {row.map((cell, j) => (
                <td
                  key={result.columns[j]?.name ?? j}
                  className={`${NUMERIC.test(result.columns[j]?.type ?? '') ? 'num' : ''} ${cell === null ? 'is-null' : ''}`}
                >
                  {result.columns[j]?.name === 'trace_id' && typeof cell === 'string' ? (
                    <a href={hrefFor({ view: 'traces', traceId: cell }, { reset: true })}>{cell}</a>
                  ) : (
                    formatCell(cell)
                  )}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
