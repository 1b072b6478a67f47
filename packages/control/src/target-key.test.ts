import { describe, expect, test } from 'vitest';
import { formatTargetKey, matchesTargetPattern, parseTargetKey } from './target-key.ts';

describe('target keys and policy target patterns', () => {
  test('a target key is canonical whatever the property order', () => {
    expect(formatTargetKey({ pool: 'h100-east', model: 'llama-8b' })).toBe('pool=h100-east,model=llama-8b');
    expect(formatTargetKey({ model: 'llama-8b', pool: 'h100-east' })).toBe('pool=h100-east,model=llama-8b');
    expect(formatTargetKey({})).toBe('');
  });

  test('a target key reads back as its target', () => {
    const target = { pool: 'h100-east', model: 'llama-3.1-8b' };
    expect(parseTargetKey(formatTargetKey(target))).toEqual(target);
    expect(parseTargetKey('')).toEqual({});
  });

  test('no pattern, an empty one or * matches everything', () => {
    for (const pattern of [undefined, '', '*'])
      expect(matchesTargetPattern({ pool: 'x' }, pattern)).toBe(true);
  });

  test('dim=glob matches that dimension only; all terms must hold', () => {
    const target = { pool: 'llama8b-h100-east', model: 'llama-3.1-8b' };
    expect(matchesTargetPattern(target, 'pool=llama8b-*')).toBe(true);
    expect(matchesTargetPattern(target, 'pool=llama70b-*')).toBe(false);
    expect(matchesTargetPattern(target, 'model=llama-3.1-8b,pool=*-east')).toBe(true);
    expect(matchesTargetPattern(target, 'model=llama-3.1-8b,pool=*-west')).toBe(false);
    expect(matchesTargetPattern(target, 'region=us-east')).toBe(false);
  });

  test('a bare glob matches any value; regex characters are literal', () => {
    expect(matchesTargetPattern({ model: 'llama-3.1-8b' }, 'llama-3.1-*')).toBe(true);
    expect(matchesTargetPattern({ model: 'llama-3x1-8b' }, 'llama-3.1-*')).toBe(false);
    expect(matchesTargetPattern({ pool: 'a1' }, 'a?')).toBe(true);
  });
});
