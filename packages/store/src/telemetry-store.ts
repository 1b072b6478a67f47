import type { BatchWriter } from './batch-writer.ts';
import type { IngestCpu } from './ingest-cpu/ingest-cpu.ts';
import type { StorageStats } from './retention/collect-storage-stats.ts';
import type { RetentionPolicy, RetentionReport } from './retention/run-retention.ts';
import type { UserQueryOptions, UserQueryResult } from './run-user-query.ts';

/**
 * What the server needs of a store on either engine: the embedded DuckDB store (`Store`,
 * create-store.ts) or ClickHouse (`ClickHouseStore`, clickhouse/open-clickhouse-store.ts).
 */
export interface TelemetryStore {
  readonly engine: 'duckdb' | 'clickhouse';
  /** Where retention exports rows before deleting them; null: it drops them (or is off). */
  readonly exportDir: string | null;
  readonly writer: Pick<BatchWriter, 'write' | 'writeColumns' | 'stats'>;
  readonly ingestCpu: IngestCpu;
  readonly readDeadlineMs: number;
  /** Resolves when the store answers a read (readiness). */
  ping(): Promise<void>;
  /** The read-only gate for ad-hoc SQL. */
  runUserQuery(sql: string, options: UserQueryOptions): Promise<UserQueryResult>;
  runRetention(policy: RetentionPolicy): Promise<RetentionReport>;
  storageStats(): Promise<StorageStats>;
  /** Shutdown: reads in progress and later ones fail. */
  stopReads(): void;
  close(): Promise<void>;
}
