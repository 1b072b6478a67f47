import { writeFileSync } from 'node:fs';
import { parseDurationMs } from '@governor/conventions';
import { type ScenarioName, type WorkloadName, isScenarioName } from '@governor/simulator';
import { formatTable } from '../cli/format-table.ts';
import { type ParsedArgs, UsageError, flagString } from '../cli/parse-args.ts';
import { type ControlBenchReport, type ScenarioResult, runControlBench } from './control-bench.ts';
import {
  BENCH_SCENARIOS,
  BENCH_SET_NAMES,
  BENCH_WORKLOADS,
  type BenchRun,
  type BenchRunSet,
  TUNING_SEEDS,
  TUNING_WORKLOADS,
  buildBenchMatrix,
  isBenchSetName,
} from './control-bench-split.ts';

export const BENCH_CONTROL_USAGE =
  'governor bench control [--set tuning|held-out|all] [--seeds N[,N…] | --seed N] [--json FILE] [--quick] [--explain] [--duration 20m] [--scenario S[,S…]] [--workload W[,W…]] [--data-dir TRACES]';

/** The runs the command line asks for, or what was wrong with it (exit code 2). */
export function parseBenchControlRuns(args: ParsedArgs): { runs: BenchRun[] } | { error: string } {
  const set = flagString(args, 'set') ?? 'all';
  if (!isBenchSetName(set)) return { error: `unknown set "${set}"; use ${BENCH_SET_NAMES.join(', ')}` };
  const seedsText = flagString(args, 'seeds');
  const seed = flagString(args, 'seed');
  if (seedsText !== undefined && seed !== undefined) return { error: 'give --seeds or --seed, not both' };
  const seedList = splitList(seedsText ?? seed);
  for (const s of seedList ?? []) {
    if (!/^\d+$/.test(s)) return { error: `seed "${s}" is not a whole number` };
  }
  const seeds = seedList?.map(Number);
  const scenarios = splitList(flagString(args, 'scenario'))?.map((s) => (s === 'fault-free' ? 'none' : s));
  for (const s of scenarios ?? []) {
    if (!isScenarioName(s))
      return { error: `unknown scenario "${s}"; use ${BENCH_SCENARIOS.map(nameOf).join(', ')}` };
  }
  const workloads = splitList(flagString(args, 'workload')) as WorkloadName[] | undefined;
  for (const w of workloads ?? []) {
    if (!BENCH_WORKLOADS.includes(w))
      return { error: `unknown workload "${w}"; use ${BENCH_WORKLOADS.join(', ')}` };
  }
  const runs = buildBenchMatrix({
    set,
    quick: args.flags.quick === true,
    ...(seeds ? { seeds } : {}),
    ...(scenarios ? { scenarios: scenarios as ScenarioName[] } : {}),
    ...(workloads ? { workloads } : {}),
  });
  if (runs.length === 0) {
    return {
      error: `nothing to run: no scenario × workload × seed of the ${set} set matches (tuning = ${TUNING_WORKLOADS.join(', ')} at seeds ${TUNING_SEEDS.join(', ')}; every other run is held out)`,
    };
  }
  return { runs };
}

export async function runBenchControlCommand(args: ParsedArgs): Promise<number> {
  const quick = args.flags.quick === true;
  let durationMs: number;
  try {
    durationMs = parseDurationMs(flagString(args, 'duration') ?? (quick ? '15m' : '20m'));
  } catch (error) {
    throw new UsageError(`--duration: ${(error as Error).message}`, 'governor bench control --help');
  }
  const parsed = parseBenchControlRuns(args);
  if ('error' in parsed) {
    process.stderr.write(`${parsed.error}\nusage: ${BENCH_CONTROL_USAGE}\n`);
    return 2;
  }
  const { runs } = parsed;
  const tty = process.stderr.isTTY;
  const count = (set: BenchRunSet) => runs.filter((r) => r.set === set).length;
  process.stderr.write(
    `bench control: ${runs.length} scenario run(s) (tuning ${count('tuning')}, held-out ${count('held-out')}) × 6 policies and the hindsight oracle, ${durationMs / 60_000} simulated minutes each\n`,
  );
  const report = await runControlBench({
    matrix: runs,
    durationMs,
    traceDir: flagString(args, 'data-dir'),
    explain: args.flags.explain === true,
    onProgress: (line, done) => {
      if (tty) process.stderr.write(`\r\x1b[2K${line}${done ? '\n' : ''}`);
      else if (done) process.stderr.write(`${line}\n`);
    },
  });
  process.stdout.write(`${formatControlBenchReport(report)}\n`);
  const jsonFile = flagString(args, 'json');
  if (jsonFile) {
    writeFileSync(jsonFile, `${JSON.stringify(report, null, 2)}\n`);
    process.stderr.write(`wrote ${jsonFile}\n`);
  }
  return 0;
}

function splitList(value: string | undefined): string[] | undefined {
  return value
    ?.split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

function nameOf(s: ScenarioName): string {
  return s === 'none' ? 'fault-free' : s;
}

const fixed = (v: number | null, digits: number) => (v === null ? 'n/a' : v.toFixed(digits));

export function formatScenario(s: ScenarioResult): string {
  const rows = [...s.policies, ...(s.oracle ? [s.oracle.row] : [])].map((p) => [
    p.policy,
    fixed(p.successPerDollar, 1),
    fixed(p.goodput, 3),
    p.costUsd.toFixed(2),
    p.successfulTasks,
    p.tasks,
    p.ttftP95Ms === null ? 'n/a' : Math.round(p.ttftP95Ms),
    p.actions,
    p.reversals,
    fixed(p.goodTasksPerDollar, 1),
    s.oracle && p.regret === null && p.goodput !== null ? 'above oracle' : fixed(p.regret, 2),
  ]);
  const g = s.governor;
  const o = s.oracle;
  const aboveOracle = o ? s.policies.filter((p) => p.regret === null && p.goodput !== null) : [];
  const bestOracleGoodput = o ? Math.max(...o.points.map((p) => p.goodput ?? 0)) : null;
  const verdict = [
    `governor vs best baseline (${g.bestBaseline}): ${fixed(g.ratioToBestBaseline, 2)}× success/$, goodput ${g.goodputDeltaToBestBaseline !== null && g.goodputDeltaToBestBaseline >= 0 ? '+' : ''}${fixed(g.goodputDeltaToBestBaseline, 3)}`,
    `vs best baseline with goodput ≥ governor's: ${g.ratioToBestBaselineAtEqualGoodput === null ? 'none has it' : `${fixed(g.ratioToBestBaselineAtEqualGoodput, 2)}×`}`,
    `tasks within the SLO per dollar vs best baseline (${g.bestBaselineByGoodPerDollar}): ${fixed(g.goodPerDollarRatioToBestBaseline, 2)}×`,
    o
      ? `hindsight oracle: ${o.points.length} settings planned, ${o.schedulesSimulated} distinct schedules simulated; its row is the cheapest at target utilization ${o.targetUtilization} on the load per ${o.smoothingMs / 1000} s${o.shortOfBestGoodput ? ', its highest goodput (none reached the best policy goodput)' : ' reaching the best policy goodput'}; regret = cost ÷ the cheapest oracle schedule's at the row's goodput`
      : null,
    aboveOracle.length > 0
      ? `no oracle schedule reached the goodput of ${aboveOracle.map((p) => `${p.policy} (${fixed(p.goodput, 3)})`).join(', ')}: the oracle's best is ${fixed(bestOracleGoodput, 3)}`
      : null,
    g.error ? `GOVERNOR RUN FAILED: ${g.error}` : null,
    g.detectionIntervals === null
      ? null
      : `first response after ${g.detectionIntervals} interval(s)${
          g.detectionIntervalsFromObservable !== g.detectionIntervals
            ? ` (${g.detectionIntervalsFromObservable} after its first request since the fault, ${g.faultObservableAt?.slice(11, 19)})`
            : ''
        }: ${g.detectedBy}`,
    `recommendations ${g.recommendations}, applied ${g.applied}, rolled back ${g.rolledBack}`,
  ].filter((x) => x !== null);
  return [
    `## ${s.name} × ${s.workload} · seed ${s.seed} (${s.durationMin} min, ${s.wallS} s)`,
    formatTable(
      [
        'policy',
        'success/$',
        'goodput',
        'cost $',
        'successful',
        'tasks',
        'TTFT p95 ms',
        'actions',
        'reversals',
        'in-SLO/$',
        'regret',
      ],
      rows,
    ),
    ...verdict.map((v) => `  ${v}`),
    ...(g.outcomes ?? []).map((o) => `    ${o}`),
    ...(g.decisions ?? []).map((d) => `    ${d}`),
  ].join('\n');
}

const SET_TITLES: Record<BenchRunSet, string> = {
  tuning: 'tuning set: rules may be changed for these runs',
  'held-out': 'held-out set: these runs judge; no rule may be changed for them',
};

/** The verdict counts over one set's runs. */
export function summarizeSet(
  set: BenchRunSet,
  scenarios: readonly ScenarioResult[],
  controlIntervalS: number,
): string {
  const ran = scenarios.filter((s) => s.governor.error === undefined);
  const wins = ran.filter(
    (s) => (s.governor.ratioToBestBaseline ?? 0) >= 1 && (s.governor.goodputDeltaToBestBaseline ?? -1) >= 0,
  ).length;
  // Pareto: no baseline that delivers at least Governor's goodput earns more successes per dollar.
  const undominated = ran.filter((s) => (s.governor.ratioToBestBaselineAtEqualGoodput ?? 1) >= 1);
  const byMargin = undominated.filter((s) => (s.governor.ratioToBestBaselineAtEqualGoodput ?? 1.25) >= 1.25);
  const goodWins = ran.filter((s) => (s.governor.goodPerDollarRatioToBestBaseline ?? 0) >= 1).length;
  const judged = ran.filter((s) => s.oracle !== null);
  const withRegret = judged.filter((s) => s.governor.regretToOracle !== null);
  const nearOracle = withRegret.filter((s) => s.governor.regretToOracle! <= 1.2).length;
  const seeds = [...new Set(scenarios.map((s) => s.seed))].sort((a, b) => a - b);
  const total = scenarios.length;
  return [
    `Of ${total} scenario runs in the ${set} set (seeds ${seeds.join(', ')}, control interval ${controlIntervalS} s):`,
    `  best success per dollar of all policies, at equal or better goodput than that baseline: ${wins}`,
    `  no baseline with equal or better goodput earns more successes per dollar: ${undominated.length} (by ≥ 1.25×, or none matches its goodput: ${byMargin.length})`,
    `  most tasks within the SLO per dollar: ${goodWins}`,
    ...(judged.length > 0
      ? [
          `  cost within 1.2× of the hindsight oracle's at Governor's goodput: ${nearOracle} of ${withRegret.length}${withRegret.length < judged.length ? ` (the oracle reached no goodput as high as Governor's in ${judged.length - withRegret.length})` : ''}`,
        ]
      : []),
    ...(ran.length < total ? [`  Governor run failed: ${total - ran.length}`] : []),
  ].join('\n');
}

export function formatControlBenchReport(report: ControlBenchReport): string {
  const parts: string[] = [];
  for (const set of ['tuning', 'held-out'] as const) {
    const scenarios = report.scenarios.filter((s) => s.set === set);
    if (scenarios.length === 0) continue;
    parts.push(`# ${SET_TITLES[set]}`, ...scenarios.map(formatScenario));
  }
  for (const set of ['tuning', 'held-out'] as const) {
    const scenarios = report.scenarios.filter((s) => s.set === set);
    if (scenarios.length > 0) parts.push(summarizeSet(set, scenarios, report.controlIntervalS));
  }
  return parts.join('\n\n');
}
