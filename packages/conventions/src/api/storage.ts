// Shapes of GET /api/storage (docs/operations.md, "Retention"): disk use per table, the Parquet
// export folder per retention target, the TTLs, the next scheduled run and the last run per target.

export interface TableStorage {
  table: string;
  rows: number;
  /** Distinct checkpointed blocks × block size; rows still in the WAL are not counted here. */
  bytes: number;
}

export interface ExportStorage {
  /** A retention target: spans | metric_points | request_facts. */
  target: string;
  files: number;
  bytes: number;
  /** Hour partitions as `YYYY-MM-DDTHH` (event time, UTC); null without files. */
  oldestPartition: string | null;
  newestPartition: string | null;
}

export interface RetentionRunSummary {
  target: string;
  /** committed | published | failed. */
  state: string;
  /** RFC 3339 (wall clock); null while the run is still publishing its files. */
  finishedAt: string | null;
  rowsExported: number;
  /** Rows with event time before this (ns since the epoch, decimal) were exported. */
  cutoffNs: string | null;
  error: string | null;
}

export interface StorageStats {
  /** RFC 3339 (wall clock). */
  collectedAt: string;
  database: {
    fileBytes: number;
    walBytes: number;
    blockSize: number;
    usedBlocks: number;
    freeBlocks: number;
  };
  tables: TableStorage[];
  /** One entry per retention target; empty when the data dir is in memory (nothing to export to). */
  exports: ExportStorage[];
  /** The latest run per target that exported or failed; a run with nothing to export leaves no row. */
  lastRetentionRuns: RetentionRunSummary[];
}

export interface StorageResponse extends StorageStats {
  retention: {
    /** False when every TTL is 0 (keep forever) or the data dir is in memory. */
    enabled: boolean;
    /** Per target; 0 keeps rows forever. */
    ttlHours: Record<string, number>;
    /** RFC 3339 (wall clock); null when retention is off or stopped. */
    nextRunAt: string | null;
  };
}
