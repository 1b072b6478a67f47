import type { ServerConfig } from '@governor/conventions';
import type { StoreOptions } from '@governor/store';

/**
 * The DuckDB settings of `server:` for createStore, in one place so that `governor start`,
 * `governor replay` and `governor retention run --offline` open the data directory alike.
 */
export function storeOptionsFrom(server: ServerConfig, dataDir: string = server.data_dir): StoreOptions {
  return {
    dataDir,
    memoryLimit: server.duckdb_memory_limit,
    threads: server.duckdb_threads,
    vacuum: server.duckdb_vacuum,
    readDeadlineMs: server.read_deadline_ms,
    maxWaitingReads: server.max_waiting_reads,
  };
}
