import { describe, expect, it } from 'vitest';
import { applyPatch, parseSearch } from './url-state.ts';

describe('query-string state', () => {
  it('sets, replaces and removes keys', () => {
    expect(applyPatch('?view=fleet&range=1h', { view: 'traces', traceId: 'abc', range: null })).toBe(
      '?view=traces&traceId=abc',
    );
    expect(applyPatch('?a=1', { a: '' })).toBe('');
  });

  it('round-trips values that need escaping', () => {
    const search = applyPatch('', { sql: "SELECT * FROM spans WHERE name = 'a&b'" });
    expect(parseSearch(search).sql).toBe("SELECT * FROM spans WHERE name = 'a&b'");
  });
});
