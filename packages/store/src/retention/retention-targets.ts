import { rollupTable } from '../rollup-database.ts';

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
  /**
   * Where a run over this table is recorded: a retention_runs table in the same database file as
   * the table, so the DELETE and its record commit together (a DuckDB transaction writes to one
   * database only; the rollup tables have a file of their own, rollup-database.ts).
   */
  runsTable: string;
}

/** Every retention_runs table, one per database file holding a target. */
export const RETENTION_RUNS_TABLES = ['retention_runs', rollupTable('retention_runs')] as const;

export const RETENTION_TARGETS: readonly RetentionTarget[] = [
  {
    name: 'spans',
    table: 'span_store',
    timeColumn: 'start_ns',
    view: 'spans',
    staged: true,
    runsTable: 'retention_runs',
  },
  {
    name: 'metric_points',
    table: 'metric_store',
    timeColumn: 'time_ns',
    view: 'metric_points',
    staged: true,
    runsTable: 'retention_runs',
  },
  {
    name: 'request_facts',
    table: rollupTable('request_facts'),
    timeColumn: 'start_ns',
    view: 'request_history',
    staged: false,
    runsTable: rollupTable('retention_runs'),
  },
];

export function retentionTarget(name: RetentionTargetName): RetentionTarget {
  return RETENTION_TARGETS.find((t) => t.name === name)!;
}
