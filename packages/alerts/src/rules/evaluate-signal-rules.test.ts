import { readSignalValue } from '@governor/signals';
import { describe, expect, it } from 'vitest';
import type { CompiledBurnRateRule, CompiledThresholdRule } from './compiled-rule.ts';
import { evaluateBurnRateRule, evaluateThresholdRule, type SnapshotAt } from './evaluate-signal-rules.ts';
import { signalGroup, snapshotOf } from '../../test/signal-fixtures.ts';

const ttftRule: CompiledThresholdRule = {
  type: 'threshold',
  name: 'ttft-slo',
  severity: 'page',
  receivers: ['ops'],
  labels: { team: 'serving' },
  annotations: { description: 'p95 TTFT of {{ $labels.pool }} is {{ $value }} ms (limit {{ $threshold }})' },
  signal: 'ttftMs.p95',
  by: ['pool'],
  op: '>',
  threshold: 2000,
  forMs: 60_000,
  window: '5m',
  windowMs: 300_000,
};

describe('threshold rules', () => {
  it('yields the groups over the threshold, labelled and annotated', async () => {
    const snapshotAt: SnapshotAt = async (windowMs, by) => {
      expect({ windowMs, by }).toEqual({ windowMs: 300_000, by: ['pool'] });
      return snapshotOf([
        signalGroup({ pool: 'a' }, { ttftMs: { p50: 800, p95: 2345.678, p99: 3000 } }),
        signalGroup({ pool: 'b' }, { ttftMs: { p50: 300, p95: 900, p99: 1000 } }),
        signalGroup({ pool: 'c' }), // no data: never fires
      ]);
    };
    const active = await evaluateThresholdRule(ttftRule, snapshotAt, readSignalValue);
    expect(active).toHaveLength(1);
    expect(active[0]).toMatchObject({
      value: 2345.678,
      forMs: 60_000,
      labels: { alertname: 'ttft-slo', pool: 'a', severity: 'page', team: 'serving' },
      annotations: {
        summary: 'ttftMs.p95 is 2346 (> 2000) for {pool="a"} over 5m',
        description: 'p95 TTFT of a is 2346 ms (limit 2000)',
      },
    });
  });
});

const burnRule: CompiledBurnRateRule = {
  type: 'slo_burn_rate',
  name: 'goodput-budget',
  severity: 'page',
  receivers: [],
  labels: {},
  annotations: {},
  signal: 'goodput',
  by: ['pool'],
  objective: 0.99,
  minTasks: 10,
  forMs: 0,
  windows: [
    { long: '1h', short: '5m', longMs: 3_600_000, shortMs: 300_000, burnRate: 14.4, severity: 'page' },
    { long: '6h', short: '30m', longMs: 21_600_000, shortMs: 1_800_000, burnRate: 6, severity: 'ticket' },
  ],
};

describe('multiwindow, multi-burn-rate rules', () => {
  const goodput: Record<number, Record<string, number>> = {
    // pool a: burning 20x over 1h and 5m; pool b: 20x over 1h but recovered over the last 5m
    3600000: { a: 0.8, b: 0.8 },
    300000: { a: 0.8, b: 0.995 },
    // pool a: 7x over 6h and 30m
    21600000: { a: 0.93, b: 0.999 },
    1800000: { a: 0.93, b: 0.999 },
  };
  const snapshotAt: SnapshotAt = async (windowMs) =>
    snapshotOf(
      Object.entries(goodput[windowMs]!).map(([pool, g]) =>
        signalGroup({ pool }, { goodput: g, tasks: 100 }),
      ),
    );

  it('fires a pair only when both its windows burn faster than its rate', async () => {
    const active = await evaluateBurnRateRule(burnRule, snapshotAt, readSignalValue);
    expect(active.map((a) => a.labels)).toEqual([
      { alertname: 'goodput-budget', severity: 'page', long_window: '1h', short_window: '5m', pool: 'a' },
      { alertname: 'goodput-budget', severity: 'ticket', long_window: '6h', short_window: '30m', pool: 'a' },
    ]);
    expect(active[0]!.value).toBeCloseTo(20);
    expect(active[0]!.annotations.summary).toBe(
      'error budget of goodput (objective 99%) burning 20x over 1h and 20x over 5m (> 14.4x) for {pool="a"}',
    );
    expect(active[0]!.fingerprint).not.toBe(active[1]!.fingerprint);
  });

  it('does not judge groups with fewer tasks than min_tasks', async () => {
    const sparse: SnapshotAt = async () => snapshotOf([signalGroup({ pool: 'a' }, { goodput: 0, tasks: 2 })]);
    expect(await evaluateBurnRateRule(burnRule, sparse, readSignalValue)).toEqual([]);
  });
});
