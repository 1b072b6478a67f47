/** A value as the pg driver takes it (bigints are passed as their decimal text). */
export type SqlValue = string | number | boolean | null | readonly string[];

/**
 * What the PostgreSQL alert state needs of a pg.Pool (or a client): one statement with positional
 * values. The same shape as @governor/control's, declared here because alerts does not depend on
 * control.
 */
export interface PostgresQueryable {
  query<R extends Record<string, unknown> = Record<string, unknown>>(
    text: string,
    values?: readonly SqlValue[],
  ): Promise<{ rows: R[] }>;
}

/** pg returns BIGINT as text; the records hold milliseconds, counts and seq as numbers. */
export const toNumber = (value: unknown): number => Number(value);
export const toNumberOrNull = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value);
