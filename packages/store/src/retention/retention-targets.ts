// The tables retention exports and trims, each with a view that keeps its exported history
// queryable: spans and metric_points for the raw telemetry, request_history (behind the requests
// and tasks views) for the per-request rollups, which are trimmed on their own, longer TTL.

export type RetentionTargetName = 'spans' | 'metric_points' | 'request_facts';

export interface RetentionTarget {
  name: RetentionTargetName;
  table: string;
  /** Event time in ns since the epoch; also what the Parquet files are partitioned by. */
  timeColumn: string;
  /** The view over the table, redefined to include exported history. */
  view: string;
  /** Whether the ingest stage holds acknowledged rows of this table during a checkpoint. */
  staged: boolean;
}

export const RETENTION_TARGETS: readonly RetentionTarget[] = [
  { name: 'spans', table: 'span_store', timeColumn: 'start_ns', view: 'spans', staged: true },
  {
    name: 'metric_points',
    table: 'metric_store',
    timeColumn: 'time_ns',
    view: 'metric_points',
    staged: true,
  },
  {
    name: 'request_facts',
    table: 'request_facts',
    timeColumn: 'start_ns',
    view: 'request_history',
    staged: false,
  },
];

export function retentionTarget(name: RetentionTargetName): RetentionTarget {
  return RETENTION_TARGETS.find((t) => t.name === name)!;
}
