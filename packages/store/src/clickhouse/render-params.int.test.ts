import { ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClickHouseCluster, startClickHouseCluster } from '../../test/clickhouse-cluster.ts';
import { renderClickHouseParams } from './render-params.ts';

// Values written into a query's text must reach ClickHouse as the values they are — whatever a
// label or a filter from an API caller holds — and never as SQL.

let cluster: ClickHouseCluster;
beforeAll(async () => {
  cluster = await startClickHouseCluster({ shards: 1 });
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

describe('rendering query parameters for ClickHouse', () => {
  it('round-trips hostile strings, Int64 beyond 2^53, booleans, NULL and string arrays', async () => {
    const client = createClient({ url: cluster.shards[0]!.url, log: { level: ClickHouseLogLevel.OFF } });
    const hostile = [
      "x'; DROP TABLE system.one; --",
      'back\\slash\\',
      "quote ' and \\' and '' ",
      'new\nline\ttab',
      'ünïcødé 😀',
      '$other placeholder',
      '',
    ];
    for (const value of hostile) {
      const sql = renderClickHouseParams('SELECT $v AS v, $other AS o', { v: value, other: 'kept' });
      const rows = await (await client.query({ query: sql, format: 'JSONEachRow' })).json<{
        v: string;
        o: string;
      }>();
      expect(rows).toEqual([{ v: value, o: 'kept' }]);
    }
    const sql = renderClickHouseParams(
      'SELECT $big AS big, $yes AS yes, $none AS none, $list AS list, $f AS f',
      {
        big: 2n ** 62n + 1n,
        yes: true,
        none: null,
        list: ['a', null, "b'c"],
        f: 0.1,
      },
    );
    const [row] = await (await client.query({ query: sql, format: 'JSONEachRow' })).json<
      Record<string, unknown>
    >();
    expect(row).toEqual({
      big: (2n ** 62n + 1n).toString(),
      yes: 1,
      none: null,
      list: ['a', null, "b'c"],
      f: 0.1,
    });
    await client.close();
  });

  it('leaves a $ in a string literal or a comment alone', () => {
    expect(renderClickHouseParams("SELECT '$a', 'it''s \\' $a' -- $b is a comment\n, $a", { a: 1 })).toBe(
      "SELECT '$a', 'it''s \\' $a' -- $b is a comment\n, 1",
    );
  });

  it('refuses a placeholder without a value and a number ClickHouse cannot take', () => {
    expect(() => renderClickHouseParams('SELECT $missing', {})).toThrow(/\$missing/);
    expect(() => renderClickHouseParams('SELECT $n', { n: Number.NaN })).toThrow(RangeError);
  });
});
