import type { TableStorage } from '../../api/storage.ts';
import { formatBytes, formatCount } from '../../lib/format.ts';
import { BreakableName } from '../BreakableName/index.ts';

/**
 * DuckDB tables by checkpointed disk use, largest first, with exact row counts. Rows written since
 * the last checkpoint take no blocks yet (they are in the write-ahead log).
 */
export function TableStorageTable({ tables }: { tables: TableStorage[] }) {
  const rows = [...tables].sort((a, b) => b.bytes - a.bytes || b.rows - a.rows);
  const maxBytes = Math.max(0, ...rows.map((t) => t.bytes));
  return (
    <div className="table-wrap">
      <table className="table table--compact" data-testid="storage-table">
        <thead>
          <tr>
            <th scope="col">Table</th>
            <th scope="col" className="num">
              Rows
            </th>
            <th scope="col">On disk</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((t) => (
            <tr key={t.table} data-table={t.table}>
              <th scope="row" className="mono name-cell">
                <BreakableName name={t.table} />
              </th>
              <td className="num" data-col="rows">
                {formatCount(t.rows)}
              </td>
              <td data-col="bytes">
                <div className="bar-cell bar-cell--narrow">
                  <span
                    className="bar-cell__bar"
                    style={{ width: `${maxBytes > 0 ? (t.bytes / maxBytes) * 100 : 0}%` }}
                  />
                  {t.bytes === 0 && t.rows > 0 ? (
                    <span className="bar-cell__value muted" title="written since the last checkpoint">
                      in WAL
                    </span>
                  ) : (
                    <span className="bar-cell__value">{formatBytes(t.bytes)}</span>
                  )}
                </div>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
