import type { ExportStorage } from '../../api/storage.ts';
import { MISSING, formatBytes, formatCount, formatTtlHours } from '../../lib/format.ts';
import { BreakableName } from '../BreakableName/index.ts';

/**
 * One row per retention target: how long rows stay in the live table and the Parquet history
 * exported so far. Partitions are the export folder's hour folders (event time, UTC).
 */
export function RetentionTargetTable({
  ttlHours,
  exports,
}: {
  ttlHours: Record<string, number>;
  exports: ExportStorage[];
}) {
  const targets = [...new Set([...Object.keys(ttlHours), ...exports.map((e) => e.target)])];
  return (
    <div className="table-wrap">
      <table className="table table--compact" data-testid="retention-table">
        <thead>
          <tr>
            <th scope="col">Data</th>
            <th scope="col">Kept live</th>
            <th scope="col" className="num">
              Parquet
            </th>
            <th scope="col">Partitions</th>
          </tr>
        </thead>
        <tbody>
          {targets.map((target) => {
            const ttl = ttlHours[target];
            const exported = exports.find((e) => e.target === target);
            return (
              <tr key={target} data-target={target}>
                <th scope="row" className="mono name-cell">
                  <BreakableName name={target} />
                </th>
                <td data-col="ttl">
                  {ttl === undefined ? MISSING : formatTtlHours(ttl)}
                  {ttl !== undefined && ttl > 0 ? <div className="cell-sub">then to Parquet</div> : null}
                </td>
                <td className="num" data-col="parquet">
                  {exported ? formatBytes(exported.bytes) : MISSING}
                  {exported ? (
                    <div className="cell-sub">
                      {formatCount(exported.files)} {exported.files === 1 ? 'file' : 'files'}
                    </div>
                  ) : null}
                </td>
                <td data-col="partitions">
                  {exported?.oldestPartition ? (
                    <>
                      <Partition partition={exported.oldestPartition} />
                      {exported.newestPartition && exported.newestPartition !== exported.oldestPartition ? (
                        <div className="cell-sub">
                          to <Partition partition={exported.newestPartition} />
                        </div>
                      ) : null}
                    </>
                  ) : (
                    <span className="muted">none yet</span>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** `2025-03-01T07` → `2025-03-01 07:00 UTC`, as the folder `date=2025-03-01/hour=07` reads. */
function Partition({ partition }: { partition: string }) {
  const [date, hour] = partition.split('T');
  if (hour === undefined) return <span className="nowrap">{partition}</span>;
  return (
    <span title={`date=${date}/hour=${hour}`}>
      <span className="nowrap">{date}</span> <span className="nowrap">{hour}:00 UTC</span>
    </span>
  );
}
