export { createStore } from './create-store.ts';
export type { Store, StoreOptions, SqlParams } from './create-store.ts';
export { QueueFullError, WriterClosedError } from './batch-writer.ts';
export type { BatchWriter, WriterStats } from './batch-writer.ts';
export { UserQueryError } from './run-user-query.ts';
export type { UserQueryResult, UserQueryOptions, UserQueryErrorCode } from './run-user-query.ts';
export { runMigrations } from './run-migrations.ts';
export { toJsValue } from './to-js-value.ts';
