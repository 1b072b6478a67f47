/** DuckDB → JSON-safe JS: bigints become numbers when exact, else decimal strings; other DuckDB values their text. */
export function toJsValue(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') {
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(value)
      : value.toString();
  }
  if (typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') return value;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(toJsValue);
  if (typeof value === 'object') {
    const ctor = (value as object).constructor;
    if (ctor === Object) {
      return Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, toJsValue(v)]),
      );
    }
    return String(value);
  }
  return String(value);
}
