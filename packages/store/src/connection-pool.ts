import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';

/** A few connections of one instance; a DuckDB connection runs one query at a time. */
export interface ConnectionPool {
  use<T>(fn: (connection: DuckDBConnection) => Promise<T>): Promise<T>;
  closeAll(): void;
}

export async function createConnectionPool(instance: DuckDBInstance, size: number): Promise<ConnectionPool> {
  const idle: DuckDBConnection[] = [];
  const all: DuckDBConnection[] = [];
  for (let i = 0; i < size; i++) {
    const c = await instance.connect();
    idle.push(c);
    all.push(c);
  }
  const waiters: ((c: DuckDBConnection) => void)[] = [];
  const release = (c: DuckDBConnection) => {
    const next = waiters.shift();
    if (next) next(c);
    else idle.push(c);
  };
  return {
    async use(fn) {
      const connection =
        idle.pop() ?? (await new Promise<DuckDBConnection>((resolve) => waiters.push(resolve)));
      try {
        return await fn(connection);
      } finally {
        release(connection);
      }
    },
    closeAll() {
      for (const c of all) c.closeSync();
    },
  };
}
