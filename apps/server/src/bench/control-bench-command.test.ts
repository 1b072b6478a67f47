import { describe, expect, it } from 'vitest';
import type { Recommendation } from '@governor/conventions';
import type { RunSummary } from '@governor/simulator';
import {
  type ControlBenchReport,
  type GovernorFindings,
  type PolicyResult,
  type ScenarioResult,
  emptyFindings,
  summarizeFindings,
} from './control-bench.ts';
import { formatControlBenchReport, runBenchControlCommand } from './control-bench-command.ts';

const findings = (f: Partial<GovernorFindings>): GovernorFindings => ({ ...emptyFindings(), ...f });
const scenario = (name: string, governor: GovernorFindings): ScenarioResult => ({
  name,
  workload: 'azure-conv',
  durationMin: 20,
  policies: [],
  governor,
  wallS: 1,
});

describe('bench control verdict', () => {
  it('counts strict wins, undominated runs (and those by the 1.25× margin) and in-SLO-per-dollar wins apart', () => {
    const report: ControlBenchReport = {
      seed: 1,
      durationMin: 20,
      controlIntervalS: 30,
      scenarios: [
        // Cheapest of all and at least as good: a strict win, undominated, by margin, best in-SLO/$.
        scenario(
          'a',
          findings({
            ratioToBestBaseline: 1.3,
            goodputDeltaToBestBaseline: 0,
            ratioToBestBaselineAtEqualGoodput: 1.3,
            goodPerDollarRatioToBestBaseline: 1.2,
          }),
        ),
        // A cheaper baseline with worse goodput; none matches Governor's goodput.
        scenario('b', findings({ ratioToBestBaseline: 0.7, goodputDeltaToBestBaseline: 0.3 })),
        // A baseline with better goodput earns a little less per dollar: undominated, not by margin.
        scenario('c', findings({ ratioToBestBaseline: 0.8, ratioToBestBaselineAtEqualGoodput: 1.1 })),
        // Dominated.
        scenario('d', findings({ ratioToBestBaseline: 0.5, ratioToBestBaselineAtEqualGoodput: 0.9 })),
        scenario('e', findings({ error: 'evaluate answered 500' })),
      ],
    };
    const verdict = formatControlBenchReport(report).split('\n\n').at(-1)!;
    expect(verdict).toContain('Of 5 scenario runs');
    expect(verdict).toContain('at equal or better goodput than that baseline: 1\n');
    expect(verdict).toContain(
      'earns more successes per dollar: 3 (by ≥ 1.25×, or none matches its goodput: 2)',
    );
    expect(verdict).toContain('most tasks within the SLO per dollar: 1\n');
    expect(verdict).toContain('Governor run failed: 1');
  });
});

/** A policy's result earning `successPerDollar` at `goodput`. */
const policyAt = (policy: string, successPerDollar = 1, goodput = 1): PolicyResult => ({
  policy,
  successPerDollar,
  goodput,
  costUsd: 1,
  tasks: 1,
  successfulTasks: 1,
  ttftP95Ms: 1,
  actions: 0,
  reversals: 0,
  goodTasksPerDollar: successPerDollar * goodput,
});

describe('bench control detection', () => {
  const run = (firstRequestEnd: string | null) =>
    ({
      pools: [],
      faults: [
        {
          kind: 'gpu-degradation',
          target: { pool: 'p' },
          start: '2026-01-01T00:10:00.000Z',
          end: '2026-01-01T00:18:00.000Z',
          params: {},
          firstRequestEnd,
        },
      ],
    }) as unknown as RunSummary;
  // The first recommendation about the faulty pool, 2.5 minutes after the fault began.
  const recs = [
    { kind: 'shift_traffic', target: { pool: 'p' }, createdAt: '2026-01-01T00:12:30.000Z' },
  ] as unknown as Recommendation[];

  it('counts intervals from the fault start, and from the end of the first request the pool served since', () => {
    const f = summarizeFindings(
      [policyAt('governor'), policyAt('hpa')],
      run('2026-01-01T00:12:10.000Z'),
      recs,
    );
    expect(f.detectionIntervals).toBe(5);
    expect(f.detectionIntervalsFromObservable).toBe(1);
    expect(f.faultObservableAt).toBe('2026-01-01T00:12:10.000Z');
    const line = formatControlBenchReport({
      seed: 1,
      durationMin: 20,
      controlIntervalS: 30,
      scenarios: [scenario('gpu-degradation', f)],
    });
    expect(line).toContain(
      'first response after 5 interval(s) (1 after its first request since the fault, 00:12:10)',
    );
    // A pool that served nothing since the fault began: counted from the start alone.
    const none = summarizeFindings([policyAt('governor'), policyAt('hpa')], run(null), recs);
    expect(none.detectionIntervalsFromObservable).toBe(5);
  });
});

describe('bench control verdict from real ratios', () => {
  it('counts a run that earns 0.3 % less per dollar than a baseline at better goodput as a loss', () => {
    const none = { pools: [], faults: [] } as unknown as RunSummary;
    const close = summarizeFindings(
      [policyAt('governor', 103.25, 0.654), policyAt('static-peak', 103.56, 0.656)],
      none,
      [],
    );
    // 1.245× is not 1.25×.
    const margin = summarizeFindings(
      [policyAt('governor', 124.5, 0.7), policyAt('static-peak', 100, 0.7)],
      none,
      [],
    );
    const verdict = formatControlBenchReport({
      seed: 1,
      durationMin: 20,
      controlIntervalS: 30,
      scenarios: [scenario('close', close), scenario('margin', margin)],
    });
    expect(verdict).toContain("vs best baseline with goodput ≥ governor's: 1.00×");
    expect(verdict).toContain(
      'earns more successes per dollar: 1 (by ≥ 1.25×, or none matches its goodput: 0)',
    );
  });
});

describe('bench control arguments', () => {
  it('refuses an unknown workload with exit code 2 and names the valid ones, before running anything', async () => {
    const written: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string) =>
      written.push(String(chunk)) > 0) as typeof process.stderr.write;
    try {
      expect(await runBenchControlCommand({ positional: [], flags: { workload: 'mooncake' } })).toBe(2);
    } finally {
      process.stderr.write = write;
    }
    expect(written.join('')).toBe(
      'unknown workload "mooncake"; use azure-conv, azure-code, mooncake-conversation\n',
    );
  });
});
