import { describe, expect, it } from 'vitest';
import { GovernorConfig, parseGovernorConfig } from './config.ts';

describe('server.duckdb_* config', () => {
  it('defaults to 1GB and 2 threads', () => {
    const { server } = GovernorConfig.parse({});
    expect(server).toMatchObject({ duckdb_memory_limit: '1GB', duckdb_threads: 2 });
  });

  it('explains a malformed or too small limit and a bad thread count', () => {
    const result = parseGovernorConfig({
      server: { duckdb_memory_limit: '4 gigs', duckdb_threads: 0 },
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues).toEqual([
      {
        path: 'server.duckdb_memory_limit',
        segments: ['server', 'duckdb_memory_limit'],
        message:
          'expected a size with a unit (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), e.g. 1GB or 512MB; got "4 gigs"',
      },
      {
        path: 'server.duckdb_threads',
        segments: ['server', 'duckdb_threads'],
        message: expect.stringMatching(/Too small/),
      },
    ]);
    const small = parseGovernorConfig({ server: { duckdb_memory_limit: '64MB' } });
    expect(small.ok ? [] : small.issues.map((i) => i.message)).toEqual([
      'must be at least 128MB (DuckDB needs room for ingest and the signal queries); got "64MB"',
    ]);
    expect(parseGovernorConfig({ server: { duckdb_memory_limit: '128MB' } }).ok).toBe(true);
  });
});
