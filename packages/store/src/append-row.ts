import type { DuckDBAppender } from '@duckdb/node-api';
import type { SpanColumnType } from '@governor/otlp';

type Appendable = Record<string, unknown>;
type ColumnAppender = (appender: DuckDBAppender, row: Appendable) => void;

/** Builds one append function per column once, so the hot loop does no type switching. */
export function createRowAppender<Row>(
  columns: readonly { field: keyof Row & string; type: SpanColumnType }[],
): (appender: DuckDBAppender, row: Row) => void {
  const fns: ColumnAppender[] = columns.map(({ field, type }) => {
    switch (type) {
      case 'VARCHAR':
      case 'JSON':
        return (a, r) => {
          const v = r[field];
          if (v === null || v === undefined) a.appendNull();
          else a.appendVarchar(v as string);
        };
      case 'BIGINT':
        return (a, r) => {
          const v = r[field];
          if (v === null || v === undefined) a.appendNull();
          else a.appendBigInt(v as bigint);
        };
      case 'INTEGER':
        return (a, r) => {
          const v = r[field];
          if (v === null || v === undefined) a.appendNull();
          else a.appendInteger(v as number);
        };
      case 'UTINYINT':
        return (a, r) => a.appendUTinyInt(r[field] as number);
      case 'TINYINT':
        return (a, r) => a.appendTinyInt(r[field] as number);
      case 'DOUBLE':
        return (a, r) => {
          const v = r[field];
          if (v === null || v === undefined) a.appendNull();
          else a.appendDouble(v as number);
        };
      case 'BOOLEAN':
        return (a, r) => {
          const v = r[field];
          if (v === null || v === undefined) a.appendNull();
          else a.appendBoolean(v as boolean);
        };
      default:
        throw new Error(`no appender for column type ${type as string}`);
    }
  });
  return (appender, row) => {
    const r = row as unknown as Appendable;
    for (let i = 0; i < fns.length; i++) fns[i]!(appender, r);
    appender.endRow();
  };
}
