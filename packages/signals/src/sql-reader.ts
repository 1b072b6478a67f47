import type { ClickHouseReader, Store } from '@governor/store';

/**
 * Where the signals read: the embedded DuckDB store, or ClickHouse (the scale-out engine). Code
 * that reads picks the query text by `engine` — `name.sql` or `name.clickhouse.sql` beside it.
 */
export type SqlReader = Pick<Store, 'engine' | 'query' | 'readDeadlineMs'> | ClickHouseReader;
