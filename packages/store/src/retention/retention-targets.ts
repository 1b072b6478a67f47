// The tables retention exports and trims. Raw spans and metric points have views that keep
// exported history queryable; rollups are trimmed on their own, longer TTL.

export type RetentionTargetName = 'spans' | 'metric_points' | 'request_facts';

export interface RetentionTarget {
  name: RetentionTargetName;
  table: string;
  /** Event time in ns since the epoch; also what the Parquet files are partitioned by. */
  timeColumn: string;
  /** The documented view over the table, redefined to include exported history; null for rollups. */
  view: string | null;
}

export const RETENTION_TARGETS: readonly RetentionTarget[] = [
  { name: 'spans', table: 'span_store', timeColumn: 'start_ns', view: 'spans' },
  { name: 'metric_points', table: 'metric_store', timeColumn: 'time_ns', view: 'metric_points' },
  { name: 'request_facts', table: 'request_facts', timeColumn: 'start_ns', view: null },
];

export function retentionTarget(name: RetentionTargetName): RetentionTarget {
  return RETENTION_TARGETS.find((t) => t.name === name)!;
}
