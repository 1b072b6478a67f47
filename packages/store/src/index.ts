export {
  DataDirError,
  DEFAULT_READ_DEADLINE_MS,
  RollupStoppedError,
  STORE_CONNECTIONS,
  ShuttingDownError,
  createStore,
} from './create-store.ts';
export { MAIN_FILE, STORE_FILES } from './store-files.ts';
export { ReadDeadlineError, ReadersBusyError } from './connection-pool.ts';
export { readDeadlineLeft, withReadDeadline } from './read-deadline-scope.ts';
export type { Store, StoreOptions, SqlParams } from './create-store.ts';
export type { TelemetryStore } from './telemetry-store.ts';
export { ClickHouseConfigError, openClickHouseStore } from './clickhouse/open-clickhouse-store.ts';
export type { ClickHouseStore, ClickHouseStoreOptions } from './clickhouse/open-clickhouse-store.ts';
export { QueueFullError, WriterClosedError } from './batch-writer.ts';
export type { BatchWriter, WriterStats } from './batch-writer.ts';
export { CHECKPOINT_BUCKETS_S, FLUSH_BUCKETS_S } from './batch-writer.ts';
export type { DurationHistogram } from './duration-histogram.ts';
export { UserQueryError } from './run-user-query.ts';
export type { UserQueryResult, UserQueryOptions, UserQueryErrorCode } from './run-user-query.ts';
export { runMigrations } from './run-migrations.ts';
export { measureAppendRate } from './measure-append-rate.ts';
export type { AppendRate, AppendRateOptions } from './measure-append-rate.ts';
export { createIngestCpu } from './ingest-cpu/ingest-cpu.ts';
export type { IngestCpu, IngestCpuSnapshot } from './ingest-cpu/ingest-cpu.ts';
export {
  THREAD_CPU_CLOCK_IS_CPU_TIME,
  readThreadCpuUs,
  readThreadId,
} from './ingest-cpu/thread-cpu-clock.ts';
export { toJsValue } from './to-js-value.ts';
export { RETENTION_TARGETS } from './retention/retention-targets.ts';
export type { RetentionTarget, RetentionTargetName } from './retention/retention-targets.ts';
export type { RetentionPolicy, RetentionReport, RetentionTargetReport } from './retention/run-retention.ts';
export type { StorageStats, TableStorage, ExportStorage } from './retention/collect-storage-stats.ts';
export { createClickHouseRollupIo } from './clickhouse/clickhouse-rollup-io.ts';
export type { ClickHouseRollupIo, FactsRow } from './clickhouse/clickhouse-rollup-io.ts';
export {
  clickHouseSchemaStatements,
  describeDuckDbTable,
  requestFactsStatements,
} from './clickhouse/clickhouse-schema.ts';
export type { ClickHouseSchemaOptions, DescribedColumn } from './clickhouse/clickhouse-schema.ts';
export { ClickHouseWriteError, createClickHouseWriter } from './clickhouse/clickhouse-writer.ts';
export type { ClickHouseWriter } from './clickhouse/clickhouse-writer.ts';
export { renderClickHouseParams } from './clickhouse/render-params.ts';
export type { ClickHouseParam } from './clickhouse/render-params.ts';
export { createClickHouseReader } from './clickhouse/clickhouse-reader.ts';
export type { ClickHouseReader, ClickHouseReaderOptions } from './clickhouse/clickhouse-reader.ts';
export { startLeaderLease } from './postgres/leader-lease.ts';
export type { LeaderLease, LeaderLeaseOptions } from './postgres/leader-lease.ts';
