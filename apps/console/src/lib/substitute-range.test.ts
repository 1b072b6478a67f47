import { describe, expect, it } from 'vitest';
import { substituteRange } from './substitute-range.ts';

describe('substituteRange', () => {
  it('replaces the range placeholders with numbers only', () => {
    const sql =
      'SELECT $step_s FROM spans WHERE start_ns >= $from_ns AND start_ns < $to_ns AND x = $from_nsx';
    expect(substituteRange(sql, { fromMs: 1000, toMs: 2000, stepMs: 15_000 })).toBe(
      'SELECT 15 FROM spans WHERE start_ns >= 1000000000 AND start_ns < 2000000000 AND x = $from_nsx',
    );
  });
});
