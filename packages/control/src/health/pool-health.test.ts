import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { binomialUpperTail, faultTest, judgeHealth, normalCdf, type PoolHealthInput } from './pool-health.ts';

const pool = (name: string, over: Partial<PoolHealthInput> = {}): PoolHealthInput => ({
  pool: name,
  requests: 600,
  errors: 0,
  overloadErrors: 0,
  engineSlowdown: 1,
  ...over,
});

const health = (pools: PoolHealthInput[], name: string) => judgeHealth(pools).find((h) => h.pool === name)!;

describe('judgeHealth', () => {
  it('does not call a pool broken for the timeouts of its own backlog: load-induced errors are capacity', () => {
    // A third of its requests time out — clients giving up in its queue — and none fail otherwise.
    const h = health([pool('a', { errors: 200, overloadErrors: 200 }), pool('b')], 'a');
    expect(h.capacityFactor).toBe(1);
    expect(h.confidence).toBe(0);
  });

  it('lowers the capacity of a pool that fails more than its peers, as surely as the sample says', () => {
    const h = health(
      [pool('a', { errors: 90, overloadErrors: 10 }), pool('b', { errors: 6 }), pool('c', { errors: 6 })],
      'a',
    );
    expect(h.capacityFactor).toBeLessThan(0.9);
    expect(h.confidence).toBeGreaterThan(0.99);
    expect(h.why).toMatch(/fail for reasons other than load/);
    // The same shares on a sample a hundred times smaller are no evidence to act on.
    const small = health(
      [pool('a', { requests: 6, errors: 1 }), pool('b', { requests: 6 }), pool('c', { requests: 6 })],
      'a',
    );
    expect(small.confidence).toBeLessThan(0.9);
  });

  it('gives a pool whose engines run slow for their work less capacity, the slower the less', () => {
    const peers = [pool('b', { engineSlowdown: 1.02 }), pool('c', { engineSlowdown: 0.97 })];
    const slow = health([pool('a', { engineSlowdown: 2 }), ...peers], 'a');
    const slower = health([pool('a', { engineSlowdown: 4 }), ...peers], 'a');
    expect(slow.capacityFactor).toBeCloseTo(0.5, 1);
    expect(slower.capacityFactor).toBeLessThan(slow.capacityFactor);
    expect(slow.confidence).toBeGreaterThan(0.99);
    // Peers that all read slow (a heavier prompt mix, say) make no one pool degraded.
    const all = judgeHealth([pool('a', { engineSlowdown: 2 }), pool('b', { engineSlowdown: 2.1 })]);
    expect(all.every((h) => h.capacityFactor > 0.9)).toBe(true);
  });

  it('leaves a pool without peers alone', () => {
    expect(health([pool('a', { errors: 300, engineSlowdown: 5 })], 'a').capacityFactor).toBe(1);
  });

  it('never lowers capacity for fewer faults, and is more confident with more evidence', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 20, max: 2000 }),
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 0, max: 100 }),
        (n, aPerMille, bPerMille) => {
          const a = Math.round((n * aPerMille) / 1000);
          const b = Math.round((n * bPerMille) / 1000);
          const more = faultTest(a + 1, n, b, n);
          const fewer = faultTest(a, n, b, n);
          expect(more.factor).toBeLessThanOrEqual(fewer.factor + 1e-12);
          const bigger = faultTest(a * 4, n * 4, b * 4, n * 4);
          expect(bigger.confidence).toBeGreaterThanOrEqual(fewer.confidence - 1e-12);
        },
      ),
    );
  });
});

describe('normalCdf', () => {
  it('matches the standard normal table', () => {
    expect(normalCdf(0)).toBeCloseTo(0.5, 6);
    expect(normalCdf(1.959964)).toBeCloseTo(0.975, 5);
    expect(normalCdf(-1)).toBeCloseTo(0.158655, 5);
  });
});

describe('binomialUpperTail', () => {
  it('matches exact binomial tails (computed in rational arithmetic)', () => {
    expect(binomialUpperTail(5, 20, 0.05)).toBeCloseTo(0.0025739403, 9);
    expect(binomialUpperTail(4, 20, 0.05)).toBeCloseTo(0.015901526, 9);
    expect(binomialUpperTail(10, 100, 0.05)).toBeCloseTo(0.0281882942, 9);
    expect(binomialUpperTail(12, 100, 0.05)).toBeCloseTo(0.0042741825, 9);
    expect(binomialUpperTail(125, 2000, 0.05)).toBeCloseTo(0.0073424287, 9);
    // Far on either side of the mean, where one tail's terms underflow.
    expect(binomialUpperTail(2, 5000, 0.9)).toBe(1);
    expect(binomialUpperTail(4000, 5000, 0.05)).toBe(0);
  });

  it('is a probability that falls as more failures are asked for, and is 1 for none', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5000 }), fc.double({ min: 0.001, max: 0.999 }), (n, p) => {
        expect(binomialUpperTail(0, n, p)).toBe(1);
        const ks = [1, 2, Math.round(n * p), Math.round(n * p) + 1, n].sort((a, b) => a - b);
        let last = 1;
        for (const k of ks) {
          const tail = binomialUpperTail(k, n, p);
          expect(tail).toBeGreaterThanOrEqual(0);
          expect(tail).toBeLessThanOrEqual(last * (1 + 1e-9));
          last = tail;
        }
        expect(binomialUpperTail(n + 1, n, p)).toBe(0);
      }),
    );
  });
});
