import { describe, expect, it } from 'vitest';
import { toCsv } from './to-csv.ts';

describe('toCsv', () => {
  it('quotes what needs quoting and leaves the rest alone', () => {
    expect(
      toCsv(
        ['pool', 'note', 'n'],
        [
          ['a', 'plain', 1],
          ['b', 'has, comma', null],
          ['c', 'say "hi"\nbye', 2.5],
        ],
      ),
    ).toBe('pool,note,n\r\na,plain,1\r\nb,"has, comma",\r\nc,"say ""hi""\nbye",2.5\r\n');
  });

  it('writes objects as JSON', () => {
    expect(toCsv(['attrs'], [[{ a: 1 }]])).toBe('attrs\r\n"{""a"":1}"\r\n');
  });
});
