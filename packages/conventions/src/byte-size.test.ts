import { describe, expect, it } from 'vitest';
import { parseByteSize } from './byte-size.ts';

describe('parseByteSize', () => {
  it('reads decimal units as powers of 1000 and binary ones as powers of 1024, like DuckDB', () => {
    expect(parseByteSize('1GB')).toBe(1e9);
    expect(parseByteSize('512MB')).toBe(512e6);
    expect(parseByteSize('1.5GiB')).toBe(1.5 * 2 ** 30);
    expect(parseByteSize(' 256 mib ')).toBe(256 * 2 ** 20);
    expect(parseByteSize('2TB')).toBe(2e12);
    expect(parseByteSize('4096B')).toBe(4096);
  });

  it('refuses what DuckDB would read differently or not at all, naming the units', () => {
    for (const bad of ['lots', '1', '1G', '1 XB', '-1GB', '1,5GB', '']) {
      expect(() => parseByteSize(bad), bad).toThrow(
        /expected a number with a unit \(B, KB, MB, GB, TB, KiB, MiB, GiB, TiB\)/,
      );
    }
  });
});
