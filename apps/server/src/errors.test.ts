import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, GovernorError, toGovernorError } from './errors.ts';

const doc = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');

/** code → the HTTP status column of its row in docs/errors.md. */
const documented = new Map(
  [...doc.matchAll(/^\|\s*`(GOV_ERR_[A-Z0-9_]+)`\s*\|([^|]+)\|/gm)].map((m) => [m[1]!, m[2]!.trim()]),
);

describe('error codes', () => {
  it.each(Object.entries(ERROR_CODES))(
    '%s is documented in docs/errors.md with its HTTP status',
    (code, status) => {
      expect(documented.has(code), `add a row for ${code} to docs/errors.md`).toBe(true);
      expect(documented.get(code)).toBe(String(status));
    },
  );

  it('every documented row has a meaning and a what-to-do', () => {
    const rows = doc.split('\n').filter((l) => /^\|\s*`GOV_ERR_/.test(l));
    expect(rows.length).toBeGreaterThanOrEqual(Object.keys(ERROR_CODES).length);
    for (const line of rows) {
      const cells = line.split('|').slice(1, -1);
      expect(cells.length, line).toBe(4);
      expect(
        cells.every((c) => c.trim().length > 0),
        line,
      ).toBe(true);
    }
  });

  it('converts unknown throws into GOV_ERR_INTERNAL, keeping the cause', () => {
    const cause = new RangeError('boom');
    const converted = toGovernorError(cause);
    expect(converted).toBeInstanceOf(GovernorError);
    expect(converted.code).toBe('GOV_ERR_INTERNAL');
    expect(converted.statusCode).toBe(500);
    expect(converted.cause).toBe(cause);
  });
});
