// Sizes the way DuckDB reads memory_limit: decimal units are powers of 1000 (1GB = 10^9 bytes),
// binary units powers of 1024 (1GiB = 2^30). Only the unit names both agree on are accepted, so
// a value that passes here means the same number of bytes inside DuckDB.

const UNIT_BYTES: Record<string, number> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

export const BYTE_SIZE_UNITS = ['B', 'KB', 'MB', 'GB', 'TB', 'KiB', 'MiB', 'GiB', 'TiB'] as const;

/** Parses sizes such as `1GB`, `512MB`, `1.5GiB` (case-insensitive); throws with a clear message otherwise. */
export function parseByteSize(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*$/i.exec(text);
  const unit = UNIT_BYTES[match?.[2]?.toLowerCase() ?? ''];
  if (!match || unit === undefined) {
    throw new Error(
      `invalid size "${text}": expected a number with a unit (${BYTE_SIZE_UNITS.join(', ')}), e.g. 1GB or 512MB`,
    );
  }
  return Math.floor(Number(match[1]) * unit);
}
