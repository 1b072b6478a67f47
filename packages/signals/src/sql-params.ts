import type { SqlParams } from '@governor/store';

export type ParamValue = string | number | bigint | boolean | null;

const PARAM = /\$([a-z_][a-z0-9_]*)/gi;

/** The `$name` parameters a statement uses (comments ignored); DuckDB rejects values it does not use. */
export function listSqlParams(sql: string): string[] {
  const code = sql.replace(/--[^\n]*/g, '');
  return [...new Set([...code.matchAll(PARAM)].map((m) => m[1]!))];
}

/** Picks the values a statement uses from a full parameter set; throws when one is missing. */
export function pickSqlParams(sql: string, all: Readonly<Record<string, ParamValue>>): SqlParams {
  const out: Record<string, ParamValue> = {};
  for (const name of listSqlParams(sql)) {
    if (!(name in all)) throw new Error(`SQL parameter $${name} has no value`);
    out[name] = all[name]!;
  }
  return out;
}

/** DuckDB → JS for a BIGINT nanosecond value read through store.query (number or decimal string). */
export function toBigIntOrNull(value: unknown): bigint | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? BigInt(Math.trunc(value)) : null;
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return BigInt(value);
  return null;
}

export function toNumberOrNull(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'string' && value.trim() !== '') {
    const n = Number(value);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}
