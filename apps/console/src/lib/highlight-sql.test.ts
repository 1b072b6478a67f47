import { describe, expect, it } from 'vitest';
import { findErrorLine, tokenizeSql } from './highlight-sql.ts';

describe('tokenizeSql', () => {
  it('gives back the input exactly', () => {
    const sql =
      "SELECT pool, count(*) AS n -- comment\nFROM spans WHERE name = 'it''s' AND x >= 1.5e3 /* block */";
    expect(
      tokenizeSql(sql)
        .map((t) => t.text)
        .join(''),
    ).toBe(sql);
  });

  it('classifies keywords, functions, strings, numbers and comments', () => {
    const tokens = tokenizeSql("select count(x), 'a' from t -- c\n1").filter((t) => t.type !== 'space');
    expect(tokens.map((t) => [t.type, t.text])).toEqual([
      ['keyword', 'select'],
      ['function', 'count'],
      ['text', '(x),'],
      ['string', "'a'"],
      ['keyword', 'from'],
      ['text', 't'],
      ['comment', '-- c'],
      ['number', '1'],
    ]);
  });

  it('treats a function name without parentheses as an identifier', () => {
    expect(tokenizeSql('count').map((t) => t.type)).toEqual(['text']);
  });

  it('survives an unterminated string', () => {
    expect(tokenizeSql("SELECT 'open").at(-1)).toEqual({ type: 'string', text: "'open" });
  });

  it('finds the line DuckDB names in an error', () => {
    expect(findErrorLine('Parser Error: syntax error at or near "FORM"\n\nLINE 3: FORM spans')).toBe(3);
    expect(findErrorLine('no line here')).toBeNull();
  });
});
