import { describe, expect, it } from 'vitest';
import { commonLabels, fingerprintLabels, formatLabels } from './labels.ts';

describe('fingerprintLabels', () => {
  it('is the same whatever the order of the labels', () => {
    expect(fingerprintLabels({ alertname: 'ttft-slo', pool: 'a' })).toBe(
      fingerprintLabels({ pool: 'a', alertname: 'ttft-slo' }),
    );
  });

  it('differs per group and per rule', () => {
    const a = fingerprintLabels({ alertname: 'ttft-slo', pool: 'a' });
    expect(fingerprintLabels({ alertname: 'ttft-slo', pool: 'b' })).not.toBe(a);
    expect(fingerprintLabels({ alertname: 'e2e-slo', pool: 'a' })).not.toBe(a);
    // A label boundary cannot be shifted to forge a collision.
    expect(fingerprintLabels({ a: 'bc' })).not.toBe(fingerprintLabels({ ab: 'c' }));
    expect(a).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe('commonLabels / formatLabels', () => {
  it('keeps only labels every alert shares, sorted', () => {
    expect(
      commonLabels([
        { severity: 'page', alertname: 'x', pool: 'a' },
        { alertname: 'x', pool: 'b', severity: 'page' },
      ]),
    ).toEqual({ alertname: 'x', severity: 'page' });
    expect(formatLabels({ pool: 'a"b', alertname: 'x' })).toBe('{alertname="x",pool="a\\"b"}');
  });
});
