import { describe, expect, it } from 'vitest';
import { createPrometheusText } from './prometheus-text.ts';

describe('createPrometheusText', () => {
  it('writes HELP and TYPE once per family, then its samples, escaping label values and help', () => {
    const text = createPrometheusText();
    const f = text.family('governor_x', 'gauge', 'A "value"\\with a\nnewline');
    f.sample({ pool: 'a"b\\c\nd' }, 1.5);
    f.sample({}, 2);
    expect(text.toString()).toBe(
      '# HELP governor_x A "value"\\\\with a\\nnewline\n# TYPE governor_x gauge\ngovernor_x{pool="a\\"b\\\\c\\nd"} 1.5\ngovernor_x 2\n',
    );
  });

  it('leaves out samples without a value and families without samples, and empty label values', () => {
    const text = createPrometheusText();
    text.family('governor_empty', 'gauge', 'never sampled').sample({ pool: 'a' }, null);
    text
      .family('governor_some', 'counter', 'sampled')
      .sample({ pool: '', hop: 'queue' }, Number.POSITIVE_INFINITY);
    expect(text.toString()).toBe(
      '# HELP governor_some sampled\n# TYPE governor_some counter\ngovernor_some{hop="queue"} +Inf\n',
    );
  });

  it('writes histogram and summary series with their suffixes in one family', () => {
    const text = createPrometheusText();
    const h = text.family('governor_latency_seconds', 'histogram', 'latency');
    h.sample({ le: '0.1' }, 3, '_bucket');
    h.sample({ le: '+Inf' }, 4, '_bucket');
    h.sample({}, 0.5, '_sum');
    h.sample({}, 4, '_count');
    expect(text.toString().split('\n').slice(2, 6)).toEqual([
      'governor_latency_seconds_bucket{le="0.1"} 3',
      'governor_latency_seconds_bucket{le="+Inf"} 4',
      'governor_latency_seconds_sum 0.5',
      'governor_latency_seconds_count 4',
    ]);
    expect(() => text.family('governor_g', 'gauge', 'g').sample({}, 1, '_sum')).toThrow(/no _sum series/);
  });

  it('rejects invalid metric and label names and a family declared with two types', () => {
    const text = createPrometheusText();
    expect(() => text.family('governor-x', 'gauge', '')).toThrow(/invalid Prometheus metric name/);
    expect(() => text.family('governor_y', 'gauge', '').sample({ 'bad-label': 'v' }, 1)).toThrow(
      /invalid Prometheus label name/,
    );
    text.family('governor_z', 'gauge', '');
    expect(() => text.family('governor_z', 'counter', '')).toThrow(/declared as gauge and counter/);
  });
});
