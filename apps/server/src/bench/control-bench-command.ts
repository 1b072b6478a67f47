import { writeFileSync } from 'node:fs';
import { parseDurationMs } from '@governor/conventions';
import { type ScenarioName, type WorkloadName, isScenarioName } from '@governor/simulator';
import { type ParsedArgs, flagNumber, flagString } from '../cli/parse-args.ts';
import { formatTable } from '../cli/format-table.ts';
import {
  BENCH_SCENARIOS,
  BENCH_WORKLOADS,
  type ControlBenchReport,
  QUICK_MATRIX,
  type ScenarioResult,
  runControlBench,
} from './control-bench.ts';

export const BENCH_CONTROL_USAGE =
  'governor bench control [--json FILE] [--quick] [--explain] [--duration 20m] [--seed N] [--scenario S[,S…]] [--workload W[,W…]] [--data-dir TRACES]';

export async function runBenchControlCommand(args: ParsedArgs): Promise<number> {
  const quick = args.flags.quick === true;
  const durationMs = parseDurationMs(flagString(args, 'duration') ?? (quick ? '15m' : '20m'));
  const seed = flagNumber(args, 'seed') ?? 1;
  const scenarios = splitList(flagString(args, 'scenario'))?.map((s) => (s === 'fault-free' ? 'none' : s));
  for (const s of scenarios ?? []) {
    if (!isScenarioName(s)) {
      process.stderr.write(`unknown scenario "${s}"; use ${BENCH_SCENARIOS.map(nameOf).join(', ')}\n`);
      return 2;
    }
  }
  const workloads = splitList(flagString(args, 'workload')) as WorkloadName[] | undefined;
  for (const w of workloads ?? []) {
    if (!BENCH_WORKLOADS.includes(w)) {
      process.stderr.write(`unknown workload "${w}"; use ${BENCH_WORKLOADS.join(', ')}\n`);
      return 2;
    }
  }
  const matrix = (
    quick
      ? QUICK_MATRIX
      : BENCH_SCENARIOS.flatMap((scenario) => BENCH_WORKLOADS.map((workload) => ({ scenario, workload })))
  ).filter(
    (m) => (!scenarios || scenarios.includes(m.scenario)) && (!workloads || workloads.includes(m.workload)),
  ) as { scenario: ScenarioName; workload: WorkloadName }[];
  if (matrix.length === 0) {
    process.stderr.write(`nothing to run: no scenario × workload matches\nusage: ${BENCH_CONTROL_USAGE}\n`);
    return 2;
  }
  const tty = process.stderr.isTTY;
  process.stderr.write(
    `bench control: ${matrix.length} scenario run(s) × 6 policies, ${durationMs / 60_000} simulated minutes each, seed ${seed}\n`,
  );
  const report = await runControlBench({
    matrix,
    durationMs,
    seed,
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
  const rows = s.policies.map((p) => [
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
  ]);
  const g = s.governor;
  const verdict = [
    `governor vs best baseline (${g.bestBaseline}): ${fixed(g.ratioToBestBaseline, 2)}× success/$, goodput ${g.goodputDeltaToBestBaseline !== null && g.goodputDeltaToBestBaseline >= 0 ? '+' : ''}${fixed(g.goodputDeltaToBestBaseline, 3)}`,
    `vs best baseline with goodput ≥ governor's: ${g.ratioToBestBaselineAtEqualGoodput === null ? 'none has it' : `${fixed(g.ratioToBestBaselineAtEqualGoodput, 2)}×`}`,
    `tasks within the SLO per dollar vs best baseline (${g.bestBaselineByGoodPerDollar}): ${fixed(g.goodPerDollarRatioToBestBaseline, 2)}×`,
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
    `## ${s.name} × ${s.workload} (${s.durationMin} min, ${s.wallS} s)`,
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
      ],
      rows,
    ),
    ...verdict.map((v) => `  ${v}`),
    ...(g.outcomes ?? []).map((o) => `    ${o}`),
    ...(g.decisions ?? []).map((d) => `    ${d}`),
  ].join('\n');
}

export function formatControlBenchReport(report: ControlBenchReport): string {
  const lines = report.scenarios.map(formatScenario);
  const ran = report.scenarios.filter((s) => s.governor.error === undefined);
  const wins = ran.filter(
    (s) => (s.governor.ratioToBestBaseline ?? 0) >= 1 && (s.governor.goodputDeltaToBestBaseline ?? -1) >= 0,
  ).length;
  // Pareto: no baseline that delivers at least Governor's goodput earns more successes per dollar.
  const undominated = ran.filter((s) => (s.governor.ratioToBestBaselineAtEqualGoodput ?? 1) >= 1);
  const byMargin = undominated.filter((s) => (s.governor.ratioToBestBaselineAtEqualGoodput ?? 1.25) >= 1.25);
  const goodWins = ran.filter((s) => (s.governor.goodPerDollarRatioToBestBaseline ?? 0) >= 1).length;
  const total = report.scenarios.length;
  lines.push(
    [
      `Of ${total} scenario runs (seed ${report.seed}, control interval ${report.controlIntervalS} s):`,
      `  best success per dollar of all policies, at equal or better goodput than that baseline: ${wins}`,
      `  no baseline with equal or better goodput earns more successes per dollar: ${undominated.length} (by ≥ 1.25×, or none matches its goodput: ${byMargin.length})`,
      `  most tasks within the SLO per dollar: ${goodWins}`,
      ...(ran.length < total ? [`  Governor run failed: ${total - ran.length}`] : []),
    ].join('\n'),
  );
  return lines.join('\n\n');
}
