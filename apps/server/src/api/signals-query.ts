import { GROUP_DIMENSIONS, type GroupDimension, parseDurationMs } from '@governor/conventions';
import { GovernorError } from '../errors.ts';

// Query-string parsing shared by the signals, traces and tasks routes: durations, RFC 3339 event
// times (nanosecond precision kept), group-by lists and dimension filters. Every failure is a
// GovernorError with a message that says what was expected.

export const MAX_WINDOW_MS = 7 * 24 * 3_600_000;

export type Query = Record<string, string | undefined>;

/** Fastify's query object → single string values; a repeated parameter is an error. */
export function readQuery(raw: unknown, allowed: readonly string[]): Query {
  const query = (raw ?? {}) as Record<string, unknown>;
  const out: Query = {};
  for (const [name, value] of Object.entries(query)) {
    if (!allowed.includes(name)) {
      throw new GovernorError(
        'GOV_ERR_REQUEST_INVALID',
        `unknown query parameter "${name}"; this endpoint takes ${allowed.join(', ')}`,
      );
    }
    if (Array.isArray(value))
      throw new GovernorError(
        'GOV_ERR_REQUEST_INVALID',
        `query parameter "${name}" was given more than once`,
      );
    out[name] = typeof value === 'string' ? value : String(value);
  }
  return out;
}

export function parseWindowMs(text: string | undefined, name: string, fallback: string): number {
  const value = text === undefined || text === '' ? fallback : text;
  let ms: number;
  try {
    ms = parseDurationMs(value);
  } catch (error) {
    throw new GovernorError('GOV_ERR_SIGNALS_BAD_WINDOW', `${name}: ${(error as Error).message}`);
  }
  if (ms <= 0)
    throw new GovernorError('GOV_ERR_SIGNALS_BAD_WINDOW', `${name} must be longer than 0, got "${value}"`);
  if (ms > MAX_WINDOW_MS)
    throw new GovernorError('GOV_ERR_SIGNALS_BAD_WINDOW', `${name} may be at most 7d, got "${value}"`);
  return ms;
}

export function parseGroupBy(text: string | undefined): GroupDimension[] {
  if (text === undefined || text.trim() === '') return [];
  const dims = text.split(',').map((d) => d.trim());
  for (const dim of dims) {
    if (!(GROUP_DIMENSIONS as readonly string[]).includes(dim)) {
      throw new GovernorError(
        'GOV_ERR_SIGNALS_BAD_DIMENSION',
        `by: "${dim}" is not a group dimension; use a comma-separated list of ${GROUP_DIMENSIONS.join(', ')}`,
      );
    }
  }
  if (new Set(dims).size !== dims.length)
    throw new GovernorError('GOV_ERR_SIGNALS_BAD_DIMENSION', `by: "${text}" names a dimension twice`);
  return dims as GroupDimension[];
}

/** `pool=…&tenant=…` → a filter on those dimensions. */
export function parseDimensionFilter(query: Query): Partial<Record<GroupDimension, string>> {
  const filter: Partial<Record<GroupDimension, string>> = {};
  for (const dim of GROUP_DIMENSIONS) {
    const value = query[dim];
    if (value !== undefined && value !== '') filter[dim] = value;
  }
  return filter;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;

/** RFC 3339 → nanoseconds since the epoch (fractions to the nanosecond), or a 400 naming the parameter. */
export function parseRfc3339Ns(text: string, name: string): bigint {
  const m = RFC3339.exec(text);
  const bad = () =>
    new GovernorError(
      'GOV_ERR_SIGNALS_BAD_TIME',
      `${name}: "${text}" is not an RFC 3339 time; expected e.g. 2026-01-01T12:00:00Z or 2026-01-01T12:00:00.250+02:00`,
    );
  if (!m) throw bad();
  const [, y, mo, d, h, mi, s, fraction = '', zone] = m;
  const wholeMs = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}${zone!.toUpperCase()}`);
  if (!Number.isFinite(wholeMs)) throw bad();
  // Date.parse accepts 2026-02-31 by rolling over; reject dates that do not exist.
  const check = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (
    check.getUTCMonth() !== Number(mo) - 1 ||
    check.getUTCDate() !== Number(d) ||
    Number(h) > 23 ||
    Number(mi) > 59 ||
    Number(s) > 60
  ) {
    throw bad();
  }
  return BigInt(wholeMs) * 1_000_000n + BigInt(fraction.padEnd(9, '0') || '0');
}

export function parseOptionalTime(text: string | undefined, name: string): bigint | undefined {
  return text === undefined || text === '' ? undefined : parseRfc3339Ns(text, name);
}

export function parseLimit(text: string | undefined, fallback: number, max: number): number {
  if (text === undefined || text === '') return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > max) {
    throw new GovernorError(
      'GOV_ERR_REQUEST_INVALID',
      `limit must be an integer from 1 to ${max}, got "${text}"`,
    );
  }
  return n;
}

export function parseNonNegativeNumber(text: string | undefined, name: string): number | undefined {
  if (text === undefined || text === '') return undefined;
  const n = Number(text);
  if (!Number.isFinite(n) || n < 0)
    throw new GovernorError('GOV_ERR_REQUEST_INVALID', `${name} must be a number ≥ 0, got "${text}"`);
  return n;
}
