import { describe, expect, it } from 'vitest';
import type { Recommendation } from '@governor/conventions';
import type { OraclePoint, RunSummary } from '@governor/simulator';
import {
  type ControlBenchReport,
  type GovernorFindings,
  type PolicyResult,
  type ScenarioResult,
  emptyFindings,
  judgeAgainstOracle,
  summarizeFindings,
} from './control-bench.ts';
import { formatControlBenchReport, runBenchControlCommand } from './control-bench-command.ts';
import { UsageError } from '../cli/parse-args.ts';

const findings = (f: Partial<GovernorFindings>): GovernorFindings => ({ ...emptyFindings(), ...f });
const scenario = (name: string, governor: GovernorFindings): ScenarioResult => ({
  name,
  workload: 'azure-conv',
  seed: 1,
  set: 'tuning',
  durationMin: 20,
  policies: [],
  governor,
  oracle: null,
  wallS: 1,
});

describe('bench control verdict', () => {
  it('counts strict wins, undominated runs (and those by the 1.25× margin) and in-SLO-per-dollar wins apart', () => {
    const report: ControlBenchReport = {
      seeds: [1],
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
    expect(verdict).toContain('Of 5 scenario runs in the tuning set');
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
  regret: null,
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
      seeds: [1],
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
      seeds: [1],
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
    expect(written.join('')).toMatch(
      /^unknown workload "mooncake"; use azure-conv, azure-code, mooncake-conversation, burstgpt-1, burstgpt-3, agentic-coding\nusage: governor bench control /,
    );
  });

  it('a duration without a unit is a usage error naming the flag, before anything runs', async () => {
    await expect(runBenchControlCommand({ positional: [], flags: { duration: '15' } })).rejects.toThrow(
      /^--duration: invalid duration "15": expected a number with a unit/,
    );
    await expect(
      runBenchControlCommand({ positional: [], flags: { duration: '15' } }),
    ).rejects.toBeInstanceOf(UsageError);
  });
});

describe('bench control against the hindsight oracle', () => {
  /** An oracle schedule as simulated: its target utilization, cost and goodput. */
  const point = (targetUtilization: number, costUsd: number, goodput: number): OraclePoint => ({
    targetUtilization,
    smoothingMs: 30_000,
    summary: {
      costUsd,
      goodput,
      successPerDollar: 100,
      tasks: 100,
      successfulTasks: 100,
      tasksWithinSlo: goodput * 100,
      ttftMs: { p50: 1, p95: 1, p99: 1 },
      actions: 0,
      reversals: 0,
    } as unknown as RunSummary,
  });
  const points = [point(1.2, 6, 0.9), point(0.8, 8, 0.95), point(0.5, 12, 0.97)];

  it("divides each policy's cost by the cheapest oracle schedule's at its goodput, and names those above the oracle", () => {
    const policies = [
      { ...policyAt('governor', 100, 0.95), costUsd: 9.6 },
      { ...policyAt('static-peak', 100, 0.92), costUsd: 12 },
      { ...policyAt('hpa', 100, 0.99), costUsd: 20 },
    ];
    const oracle = judgeAgainstOracle(policies, points)!;
    // Governor's 0.95 is first reached by the $8 schedule; static-peak's 0.92 too (cheaper ones fall short).
    expect(policies[0]!.regret).toBeCloseTo(1.2);
    expect(policies[1]!.regret).toBeCloseTo(1.5);
    expect(policies[2]!.regret).toBeNull();
    // No schedule reached hpa's 0.99: the oracle's row is its highest goodput, and the report says so.
    expect(oracle.shortOfBestGoodput).toBe(true);
    expect(oracle.row.costUsd).toBe(12);
    expect(oracle.schedulesSimulated).toBe(3);
    const s: ScenarioResult = {
      ...scenario('fault-free', findings({ regretToOracle: 1.2 })),
      policies,
      oracle,
    };
    const text = formatControlBenchReport({
      seeds: [1],
      durationMin: 20,
      controlIntervalS: 30,
      scenarios: [s],
    });
    expect(text).toMatch(/^hpa +\|.*\| above oracle$/m);
    expect(text).toMatch(/^oracle +\|.*\| 1\.00 *$/m);
    expect(text).toContain(
      "no oracle schedule reached the goodput of hpa (0.990): the oracle's best is 0.970",
    );
    expect(text).toContain("cost within 1.2× of the hindsight oracle's at Governor's goodput: 1 of 1");
  });

  it("counts a run whose oracle never reached Governor's goodput apart from the regret count", () => {
    const f = findings({ regretToOracle: null, oracleShortOfGoodput: true });
    const oracle = judgeAgainstOracle([policyAt('governor', 100, 0.99)], points)!;
    const text = formatControlBenchReport({
      seeds: [4],
      durationMin: 20,
      controlIntervalS: 30,
      scenarios: [
        { ...scenario('a', f), set: 'held-out', seed: 4, oracle },
        { ...scenario('b', findings({ regretToOracle: 1.5 })), set: 'held-out', seed: 4, oracle },
      ],
    });
    expect(text).toContain('# held-out set: these runs judge; no rule may be changed for them');
    expect(text).toContain(
      "cost within 1.2× of the hindsight oracle's at Governor's goodput: 0 of 1 (the oracle reached no goodput as high as Governor's in 1)",
    );
  });
});
