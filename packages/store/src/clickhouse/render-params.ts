// ClickHouse 18.16 has no query parameters (`param_x` is refused as an unknown setting), so the
// values of a query's `$name` placeholders are written into its text as literals, escaped: a string
// is quoted with every backslash and quote escaped (the server's string-literal rules), a bigint
// becomes toInt64('…') (exact past 2^53), a boolean 1 or 0, an array of strings an array literal.
// One pass over the text: a value containing `$name` is never substituted again.

export type ClickHouseParam = string | number | bigint | boolean | null | readonly (string | null)[];

export function renderClickHouseParams(
  sql: string,
  params: Readonly<Record<string, ClickHouseParam>>,
): string {
  // String literals and -- comments are copied as they are: a `$` there is no placeholder.
  return sql.replace(
    /'(?:[^'\\]|\\.)*'|--[^\n]*|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (match, name: string | undefined) => {
      if (name === undefined) return match;
      if (!(name in params)) throw new Error(`the query needs a value for $${name}`);
      return literal(params[name]!, name);
    },
  );
}

function literal(value: ClickHouseParam, name: string): string {
  if (value === null) return 'NULL';
  if (typeof value === 'boolean') return value ? '1' : '0';
  if (typeof value === 'bigint') return `toInt64('${value.toString()}')`;
  if (typeof value === 'number') {
    if (!Number.isFinite(value))
      throw new RangeError(`$${name} is ${value}: not a number ClickHouse can take`);
    return Number.isInteger(value) && Math.abs(value) <= Number.MAX_SAFE_INTEGER
      ? String(value)
      : value.toExponential();
  }
  if (typeof value === 'string') return quoteString(value);
  // An empty [] is Array(Nothing), which has() and indexOf() refuse beside a String.
  if (value.length === 0) return 'emptyArrayString()';
  return `[${value.map((v) => (v === null ? 'NULL' : quoteString(v))).join(', ')}]`;
}

function quoteString(value: string): string {
  return `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'").replaceAll('\0', '\\0')}'`;
}
