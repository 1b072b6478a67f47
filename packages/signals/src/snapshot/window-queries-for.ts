import type { GovernorConfig } from '@governor/conventions';
import type { SqlReader } from '../sql-reader.ts';
import { clickHouseWindowQueries } from './clickhouse-window-queries.ts';
import type { ParamValue } from './window-params.ts';
import { type SqlTransform, type WindowQueries, duckDbWindowQueries } from './window-rows.ts';

/** The window queries of the engine `db` reads from (a transform applies to DuckDB's only: raw source). */
export function windowQueriesFor(
  db: SqlReader,
  params: Record<string, ParamValue>,
  config: GovernorConfig,
  transform?: SqlTransform,
): WindowQueries {
  if (db.engine === 'clickhouse') return clickHouseWindowQueries(db, params, config);
  return duckDbWindowQueries(db, params, transform);
}
