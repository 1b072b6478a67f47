import { type StorageResponse, fetchStorage } from '../../api/storage.ts';
import { Panel } from '../../components/Panel/index.ts';
import { RetentionRunTable } from '../../components/RetentionRunTable/index.ts';
import { RetentionTargetTable } from '../../components/RetentionTargetTable/index.ts';
import { type StatTile, StatTiles } from '../../components/StatTiles/index.ts';
import { AsyncContent, EmptyState } from '../../components/StateView/index.ts';
import { TableStorageTable } from '../../components/TableStorageTable/index.ts';
import {
  MISSING,
  formatBytes,
  formatCount,
  formatDateTime,
  formatPercent,
  formatTime,
} from '../../lib/format.ts';
import { useApi } from '../../lib/use-api.ts';

// Disk use and retention (GET /api/storage). Wall-clock data: the time range does not apply.
// One request feeds every panel, so loading and errors show once for the whole view.

export function StorageView() {
  const storage = useApi('storage', (signal) => fetchStorage(signal));
  return (
    <div className="view" data-testid="view-storage">
      <AsyncContent state={storage} loadingLabel="Reading disk use…">
        {(d) => <StorageReport data={d} />}
      </AsyncContent>
    </div>
  );
}

function StorageReport({ data }: { data: StorageResponse }) {
  const { retention } = data;
  const targets = Object.keys(retention.ttlHours).length + data.exports.length;
  return (
    <>
      <StatTiles testId="storage-summary" tiles={summaryTiles(data)} />
      <Panel
        title="Tables"
        subtitle={`rows and checkpointed disk use per table · as of ${formatTime(Date.parse(data.collectedAt))}`}
        testId="storage-tables"
      >
        {data.tables.length === 0 ? (
          <EmptyState title="No tables yet" />
        ) : (
          <TableStorageTable tables={data.tables} />
        )}
      </Panel>
      <Panel
        title="Retention"
        subtitle={
          retention.enabled
            ? 'rows older than the TTL (event time) move to Parquet, still queryable'
            : 'off: rows stay in the live tables'
        }
        testId="storage-retention"
      >
        {targets === 0 ? (
          <EmptyState title="This Governor reports no retention targets" />
        ) : (
          <>
            <RetentionTargetTable ttlHours={retention.ttlHours} exports={data.exports} />
            {data.exports.length === 0 ? (
              <p className="muted panel__note">
                No Parquet export folder: this Governor keeps its data in memory.
              </p>
            ) : !retention.enabled ? (
              <p className="muted panel__note">
                Set <code>retention.spans_ttl_hours</code> (and <code>rollups_ttl_hours</code>) in the config
                to move old rows to Parquet.
              </p>
            ) : null}
          </>
        )}
      </Panel>
      <Panel
        title="Latest retention runs"
        subtitle="the last export per table and how it ended"
        testId="storage-runs"
      >
        {data.lastRetentionRuns.length === 0 ? (
          <EmptyState title="No retention exports yet">
            {retention.enabled
              ? 'A run that finds no rows past their TTL leaves no record here.'
              : 'Retention is off: every TTL is 0, so rows stay in the live tables.'}
          </EmptyState>
        ) : (
          <RetentionRunTable runs={data.lastRetentionRuns} />
        )}
      </Panel>
    </>
  );
}

function summaryTiles(d: StorageResponse): StatTile[] {
  const { database } = d;
  const blocks = database.usedBlocks + database.freeBlocks;
  const exportBytes = d.exports.reduce((n, e) => n + e.bytes, 0);
  const exportFiles = d.exports.reduce((n, e) => n + e.files, 0);
  const failed = d.lastRetentionRuns.filter((r) => r.state === 'failed').length;
  return [
    {
      label: 'Database file',
      value: formatBytes(database.fileBytes),
      // Deleted rows free blocks for reuse; the file itself does not shrink.
      hint: blocks > 0 ? `${formatPercent(database.freeBlocks / blocks, 0)} of blocks free` : 'no blocks yet',
    },
    {
      label: 'Write-ahead log',
      value: formatBytes(database.walBytes),
      hint: 'rows since the last checkpoint',
    },
    {
      label: 'Parquet history',
      value: d.exports.length ? formatBytes(exportBytes) : MISSING,
      hint: d.exports.length
        ? `${formatCount(exportFiles)} ${exportFiles === 1 ? 'file' : 'files'}`
        : 'no export folder',
    },
    nextRunTile(d, failed),
  ];
}

function nextRunTile(d: StorageResponse, failed: number): StatTile {
  const tone = failed > 0 ? 'bad' : 'neutral';
  const failures = failed > 0 ? `${failed} failed ${failed === 1 ? 'export' : 'exports'} · ` : '';
  if (!d.retention.enabled)
    return { label: 'Next retention run', value: 'off', tone, hint: `${failures}no TTL set` };
  const nextMs = d.retention.nextRunAt ? Date.parse(d.retention.nextRunAt) : null;
  if (nextMs === null) return { label: 'Next retention run', value: 'running', tone, hint: `${failures}now` };
  const sameDay = new Date(nextMs).toDateString() === new Date().toDateString();
  return {
    label: 'Next retention run',
    value: formatUntil(nextMs - Date.now()),
    tone,
    hint: `${failures}at ${sameDay ? formatTime(nextMs) : formatDateTime(nextMs)}`,
  };
}

function formatUntil(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  if (minutes < 1) return 'in under a minute';
  if (minutes < 90) return `in ${minutes} min`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `in ${hours} h` : `in ${Math.round(hours / 24)} d`;
}
