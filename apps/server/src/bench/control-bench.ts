import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type GovernorConfig, type Recommendation, parseGovernorConfig } from '@governor/conventions';
import {
  type FleetSpec,
  type OraclePoint,
  type PolicyName,
  type RunProgress,
  type RunSummary,
  type ScenarioName,
  type WorkloadName,
  createDefaultFleet,
  findOracleAtGoodput,
  runHindsightOracle,
  runSimulation,
} from '@governor/simulator';
import { startGovernor } from '../start-governor.ts';
import { type BenchRunSet, classifyBenchRun } from './control-bench-split.ts';

// `governor bench control`: the closed loop against the autoscalers operators run today, on real
// workload traces, under each fault scenario. Every policy sees the same seed, fleet and trace; the
// baselines run inside the simulator, Governor runs embedded (port 0, temp data dir) in lockstep.

export const BASELINES = [
  'static-peak',
  'static-mean',
  'hpa',
  'keda',
  'wva',
] as const satisfies readonly PolicyName[];

export interface PolicyResult {
  policy: string;
  successPerDollar: number | null;
  goodput: number | null;
  costUsd: number;
  tasks: number;
  successfulTasks: number;
  ttftP95Ms: number | null;
  actions: number;
  reversals: number;
  /** Tasks that succeeded within the SLO per dollar: the objective in packages/control/README.md (cost per good task, inverted). */
  goodTasksPerDollar: number | null;
  /**
   * Regret: this cost ÷ the cost of the hindsight oracle's cheapest schedule with at least this
   * goodput; null when no oracle schedule reached it (or the oracle did not run).
   */
  regret: number | null;
}

/** The hindsight oracle of one run (apps/simulator/src/oracle): every schedule it simulated. */
export interface OracleFindings {
  /** Its row: the cheapest schedule with the best goodput any policy reached, else its best goodput. */
  row: PolicyResult;
  targetUtilization: number;
  /** The span its load was averaged over before sizing (ms). */
  smoothingMs: number;
  /** No schedule reached the best policy goodput (the row then holds the oracle's highest). */
  shortOfBestGoodput: boolean;
  /** Distinct schedules simulated (settings that plan the same schedule share one run). */
  schedulesSimulated: number;
  /** Every setting planned (target utilization × load block), cheapest first. */
  points: Array<{ targetUtilization: number; smoothingMs: number; costUsd: number; goodput: number | null }>;
}

export interface GovernorFindings {
  /** Governor's success per dollar over the best baseline's. */
  ratioToBestBaseline: number | null;
  bestBaseline: string | null;
  /** Governor's goodput minus the best baseline's (≥ 0: equal or better). */
  goodputDeltaToBestBaseline: number | null;
  /** Best success per dollar among baselines with goodput at least Governor's. */
  ratioToBestBaselineAtEqualGoodput: number | null;
  /** Governor's tasks-within-SLO per dollar over the best baseline's. */
  goodPerDollarRatioToBestBaseline: number | null;
  bestBaselineByGoodPerDollar: string | null;
  /** Governor's regret against the hindsight oracle (cost ÷ the oracle's cost at Governor's goodput). */
  regretToOracle: number | null;
  /** The oracle reached no goodput as high as Governor's, so there is no regret to state. */
  oracleShortOfGoodput: boolean;
  /** Set when the Governor run failed; its row then holds no results. */
  error?: string;
  /** Control intervals from fault start to the first recommendation about the faulty target. */
  detectionIntervals: number | null;
  /**
   * The same, counted from when the fault could first show: for a fault on one pool, the end of the
   * first request that pool served after it began (a pool between bursts shows nothing); otherwise
   * the fault start.
   */
  detectionIntervalsFromObservable: number | null;
  /** When that was (ISO). */
  faultObservableAt: string | null;
  detectedBy: string | null;
  recommendations: number;
  applied: number;
  rolledBack: number;
  /** With `explain`: Governor's decisions in order (audit log, one line each). */
  decisions?: string[];
  /** With `explain`: the fault window, how Governor's requests ended and what each pool cost. */
  outcomes?: string[];
}

export interface ScenarioResult {
  name: string;
  workload: string;
  seed: number;
  set: BenchRunSet;
  durationMin: number;
  policies: PolicyResult[];
  governor: GovernorFindings;
  /** Null when the oracle was not run (`oracle: false`). */
  oracle: OracleFindings | null;
  wallS: number;
}

export interface ControlBenchReport {
  seeds: number[];
  durationMin: number;
  controlIntervalS: number;
  scenarios: ScenarioResult[];
}

export interface ControlBenchOptions {
  /** Runs in order; a run without a seed takes `seed`, one without a set is classified. */
  matrix: readonly { scenario: ScenarioName; workload: WorkloadName; seed?: number; set?: BenchRunSet }[];
  durationMs: number;
  seed?: number;
  /** Simulate the hindsight oracle of every run (default true). */
  oracle?: boolean;
  traceDir?: string;
  /** Keep Governor's decision log per run in the report. */
  explain?: boolean;
  onProgress?: (line: string, done: boolean) => void;
}

const CONTROL_INTERVAL_S = 30;

/** Governor's configuration for the bench: the simulated fleet, its SLO, and opt-in auto-apply policies. */
export function buildBenchConfig(
  fleet: FleetSpec,
  dataDir: string,
  slo: { ttftMs: number; e2eMs: number },
): GovernorConfig {
  const prices: Record<string, number> = {};
  for (const p of fleet.pools) prices[p.gpuType] = p.gpuHourUsd;
  const parsed = parseGovernorConfig({
    server: { host: '127.0.0.1', http_port: 0, grpc_port: 0, data_dir: dataDir, checkpoint_interval_s: 600 },
    pricing: { gpu_hour_usd: prices },
    pools: fleet.pools.map((p) => ({
      name: p.name,
      gpu_type: p.gpuType,
      gpus_per_replica: p.gpusPerReplica,
      model: p.model,
      region: p.region,
      min_replicas: p.minReplicas,
      max_replicas: p.maxReplicas,
    })),
    slo: { ttft_ms: slo.ttftMs, e2e_ms: slo.e2eMs },
    signals: { lateness_ms: 0 },
    control: {
      interval_s: CONTROL_INTERVAL_S,
      window: '5m',
      cooldown_s: 300,
      verify_after_s: 300,
      tick: 'lockstep',
    },
    policies: [
      { name: 'capacity', match: { kind: ['scale'] }, auto_apply: true, min_confidence: 0.5, max_step: 4 },
      {
        name: 'routing',
        match: { kind: ['shift_traffic', 'circuit_break'] },
        auto_apply: true,
        min_confidence: 0.5,
      },
      {
        name: 'admission',
        match: { kind: ['shed_load', 'retry_budget', 'downgrade_model'] },
        auto_apply: true,
        min_confidence: 0.6,
        max_actions_per_hour: 12,
      },
    ],
  });
  if (!parsed.ok)
    throw new Error(`bench config: ${parsed.issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
  return parsed.config;
}

function toPolicyResult(policy: string, s: RunSummary): PolicyResult {
  return {
    policy,
    successPerDollar: s.successPerDollar,
    goodput: s.goodput,
    costUsd: s.costUsd,
    tasks: s.tasks,
    successfulTasks: s.successfulTasks,
    ttftP95Ms: s.ttftMs.p95,
    actions: s.actions,
    reversals: s.reversals,
    goodTasksPerDollar: s.costUsd > 0 ? Math.round((s.tasksWithinSlo / s.costUsd) * 10) / 10 : null,
    regret: null,
  };
}

/**
 * Sets every row's regret against the oracle's schedules and picks the oracle's own row: its
 * cheapest schedule with the best goodput any policy reached (else its highest goodput, said so).
 */
export function judgeAgainstOracle(
  policies: PolicyResult[],
  points: readonly OraclePoint[],
): OracleFindings | null {
  if (points.length === 0) return null;
  for (const p of policies) {
    const match = p.goodput === null ? null : findOracleAtGoodput(points, p.goodput);
    p.regret = match && match.summary.costUsd > 0 ? p.costUsd / match.summary.costUsd : null;
  }
  const bestGoodput = Math.max(...policies.map((p) => p.goodput ?? 0));
  const reaching = findOracleAtGoodput(points, bestGoodput);
  const chosen =
    reaching ??
    points.reduce((a, b) =>
      (b.summary.goodput ?? 0) > (a.summary.goodput ?? 0) ||
      ((b.summary.goodput ?? 0) === (a.summary.goodput ?? 0) && b.summary.costUsd < a.summary.costUsd)
        ? b
        : a,
    );
  const row = toPolicyResult('oracle', chosen.summary);
  row.regret = 1;
  return {
    row,
    targetUtilization: chosen.targetUtilization,
    smoothingMs: chosen.smoothingMs,
    shortOfBestGoodput: reaching === null,
    schedulesSimulated: new Set(points.map((p) => p.summary)).size,
    points: points.map((p) => ({
      targetUtilization: p.targetUtilization,
      smoothingMs: p.smoothingMs,
      costUsd: p.summary.costUsd,
      goodput: p.summary.goodput,
    })),
  };
}

export async function runControlBench(options: ControlBenchOptions): Promise<ControlBenchReport> {
  const scenarios: ScenarioResult[] = [];
  const withOracle = options.oracle ?? true;
  const total = options.matrix.length * (BASELINES.length + 1 + (withOracle ? 1 : 0));
  let runIndex = 0;
  const seeds: number[] = [];
  for (const { scenario, workload, ...run } of options.matrix) {
    const started = performance.now();
    const seed = run.seed ?? options.seed ?? 1;
    if (!seeds.includes(seed)) seeds.push(seed);
    const label = `${scenario === 'none' ? 'fault-free' : scenario} × ${workload} · seed ${seed}`;
    const common = {
      workload,
      scenario,
      durationMs: options.durationMs,
      seed,
      dataDir: options.traceDir,
      log: () => {},
    };
    const policies: PolicyResult[] = [];
    for (const policy of BASELINES) {
      runIndex += 1;
      options.onProgress?.(`[${runIndex}/${total}] ${label} · ${policy}`, false);
      policies.push(toPolicyResult(policy, await runSimulation({ ...common, policy })));
    }
    runIndex += 1;
    let findings: GovernorFindings;
    try {
      const governorRun = await runGovernor(common, (p) =>
        options.onProgress?.(
          `[${runIndex}/${total}] ${label} · governor · sim ${p.simTime.slice(11, 19)} (${Math.round((100 * p.simMs) / p.durationMs)}%)`,
          false,
        ),
      );
      policies.unshift(toPolicyResult('governor', governorRun.summary));
      findings = summarizeFindings(policies, governorRun.summary, governorRun.recommendations);
      if (options.explain) {
        findings.decisions = governorRun.decisions;
        findings.outcomes = describeOutcomes(governorRun.summary);
      }
    } catch (error) {
      // Report the failed run and go on with the others rather than losing the whole bench.
      findings = failedFindings((error as Error).message);
    }
    let oracle: OracleFindings | null = null;
    if (withOracle) {
      runIndex += 1;
      options.onProgress?.(`[${runIndex}/${total}] ${label} · hindsight oracle`, false);
      const points = await runHindsightOracle({ ...common, controlIntervalMs: CONTROL_INTERVAL_S * 1000 });
      oracle = judgeAgainstOracle(policies, points);
      const gov = policies.find((p) => p.policy === 'governor');
      if (gov) {
        findings.regretToOracle = gov.regret;
        findings.oracleShortOfGoodput = gov.goodput !== null && gov.regret === null;
      }
    }
    const result: ScenarioResult = {
      name: scenario === 'none' ? 'fault-free' : scenario,
      workload,
      seed,
      set: run.set ?? classifyBenchRun(workload, seed),
      durationMin: options.durationMs / 60_000,
      policies,
      governor: findings,
      oracle,
      wallS: Math.round((performance.now() - started) / 100) / 10,
    };
    scenarios.push(result);
    options.onProgress?.(`${label}: done in ${result.wallS} s`, true);
  }
  return {
    seeds,
    durationMin: options.durationMs / 60_000,
    controlIntervalS: CONTROL_INTERVAL_S,
    scenarios,
  };
}

async function runGovernor(
  common: {
    workload: WorkloadName;
    scenario: ScenarioName;
    durationMs: number;
    seed: number;
    dataDir?: string;
  },
  onProgress: (p: RunProgress) => void,
): Promise<{ summary: RunSummary; recommendations: Recommendation[]; decisions: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'governor-bench-'));
  const fleet = createDefaultFleet();
  const sloTtftMs = 2000;
  const sloE2eMs = 60_000;
  const config = buildBenchConfig(fleet, dir, { ttftMs: sloTtftMs, e2eMs: sloE2eMs });
  // GOVERNOR_BENCH_LOG=warn|error shows the embedded Governor's log on stderr.
  const level = process.env.GOVERNOR_BENCH_LOG;
  const governor = await startGovernor({ config, logger: level ? { level } : false });
  try {
    const summary = await runSimulation({
      ...common,
      fleet,
      sloTtftMs,
      sloE2eMs,
      lockstep: governor.httpUrl,
      controlIntervalMs: CONTROL_INTERVAL_S * 1000,
      onProgress,
      log: () => {},
    });
    if (summary.lockstep && summary.lockstep.failures > 0) {
      throw new Error(
        `lockstep evaluate failed ${summary.lockstep.failures} times: ${summary.lockstep.lastError}`,
      );
    }
    const recommendations = await governor.control.listRecommendations({ limit: 10_000 });
    const byId = new Map(recommendations.map((r) => [r.id, r]));
    const decisions = (await governor.control.listAudit({ limit: 10_000 }))
      .reverse()
      // A proposal shows on its own line only when nothing applied it; otherwise the apply says it.
      .filter(
        (a) =>
          (a.decision !== 'proposed' || !a.recommendationId || !byId.get(a.recommendationId)?.appliedAt) &&
          a.decision !== 'refreshed' &&
          a.decision !== 'delivered',
      )
      .map((a) => {
        const rec = a.recommendationId ? byId.get(a.recommendationId) : undefined;
        const target = Object.values(a.target ?? {}).join('/');
        const why =
          a.decision === 'auto_applied' || a.decision === 'applied' ? (rec?.reason ?? a.reason) : a.reason;
        // The policy may have cut the step short of what the reason asked for: say so.
        const limited =
          a.decision === 'auto_applied' && rec?.gate?.includes('max_step') ? ` (${rec.gate})` : '';
        return `${a.at.slice(11, 19)} ${a.decision} ${a.kind ?? ''} ${target} ${JSON.stringify(rec?.action ?? {})} — ${why}${limited}`;
      });
    return { summary, recommendations, decisions };
  } finally {
    await governor.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Request outcomes and per-pool cost of a run, one line each. */
export function describeOutcomes(s: RunSummary): string[] {
  return [
    ...s.faults.map(
      (f) =>
        `fault ${f.kind} on ${Object.values(f.target).join('/')} from ${f.start.slice(11, 19)} to ${f.end.slice(11, 19)}${f.firstRequestEnd === null ? '' : `; the first request it served since ended ${f.firstRequestEnd.slice(11, 19)}`}`,
    ),
    `requests ${s.requests}: ${s.successes} succeeded, ${s.errors - s.timeouts - s.preempted} errors, ${s.timeouts} timeouts, ${s.preempted} preempted mid-stream, ${s.rejected} rejected (shed, retry budget, circuit open, no capacity); ${s.retries} retries; ${s.tasks - s.successfulTasks} tasks failed`,
    ...s.pools.map(
      (p) =>
        `${p.pool}: ${p.requests} requests, ${p.errors} errors, replicas avg ${p.replicasAvg.toFixed(2)} (max ${p.replicasMax}), $${p.costUsd.toFixed(2)}`,
    ),
  ];
}

/** Findings with nothing measured yet (a failed Governor run adds its error). */
export function emptyFindings(): GovernorFindings {
  return {
    ratioToBestBaseline: null,
    bestBaseline: null,
    goodputDeltaToBestBaseline: null,
    ratioToBestBaselineAtEqualGoodput: null,
    goodPerDollarRatioToBestBaseline: null,
    bestBaselineByGoodPerDollar: null,
    regretToOracle: null,
    oracleShortOfGoodput: false,
    detectionIntervals: null,
    detectionIntervalsFromObservable: null,
    faultObservableAt: null,
    detectedBy: null,
    recommendations: 0,
    applied: 0,
    rolledBack: 0,
  };
}

function failedFindings(message: string): GovernorFindings {
  return { ...emptyFindings(), error: message };
}

export function summarizeFindings(
  policies: PolicyResult[],
  governor: RunSummary,
  recommendations: Recommendation[],
): GovernorFindings {
  const gov = policies.find((p) => p.policy === 'governor')!;
  const baselines = policies.filter((p) => p.policy !== 'governor');
  const best = baselines.reduce<PolicyResult | null>(
    (a, b) => (a === null || (b.successPerDollar ?? 0) > (a.successPerDollar ?? 0) ? b : a),
    null,
  );
  const atEqualGoodput = baselines
    .filter((b) => (b.goodput ?? 0) >= (gov.goodput ?? 0))
    .reduce<PolicyResult | null>(
      (a, b) => (a === null || (b.successPerDollar ?? 0) > (a.successPerDollar ?? 0) ? b : a),
      null,
    );
  // Unrounded: the verdict counts runs at 1× and 1.25×, where 0.997 is a loss (the text rounds).
  const ratio = (a: number | null, b: number | null | undefined) => (a !== null && b ? a / b : null);
  const bestGood = baselines.reduce<PolicyResult | null>(
    (a, b) => (a === null || (b.goodTasksPerDollar ?? 0) > (a.goodTasksPerDollar ?? 0) ? b : a),
    null,
  );

  let detectionIntervals: number | null = null;
  let detectionIntervalsFromObservable: number | null = null;
  let faultObservableAt: string | null = null;
  let detectedBy: string | null = null;
  const fault = governor.faults[0];
  if (fault) {
    const startMs = Date.parse(fault.start);
    const observableMs =
      fault.target.pool !== undefined && fault.firstRequestEnd !== null
        ? Math.max(startMs, Date.parse(fault.firstRequestEnd))
        : startMs;
    faultObservableAt = new Date(observableMs).toISOString();
    const regionPools = new Set(
      governor.pools.filter((p) => p.region === fault.target.region).map((p) => p.pool),
    );
    const about = (r: Recommendation) =>
      (fault.target.pool !== undefined && r.target.pool === fault.target.pool) ||
      (fault.target.region !== undefined && r.target.pool !== undefined && regionPools.has(r.target.pool)) ||
      (fault.kind.startsWith('retry-storm') && r.kind === 'retry_budget') ||
      (fault.kind === 'agentic-surge' && (r.kind === 'shed_load' || r.kind === 'scale'));
    const first = recommendations
      .filter((r) => Date.parse(r.createdAt) >= startMs && about(r))
      .sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt))[0];
    if (first) {
      const intervalsSince = (ms: number) =>
        Math.max(1, Math.ceil((Date.parse(first.createdAt) - ms) / (CONTROL_INTERVAL_S * 1000)));
      detectionIntervals = intervalsSince(startMs);
      detectionIntervalsFromObservable = intervalsSince(observableMs);
      detectedBy = `${first.kind} ${JSON.stringify(first.target)}`;
    }
  }
  return {
    ratioToBestBaseline: ratio(gov.successPerDollar, best?.successPerDollar),
    bestBaseline: best?.policy ?? null,
    goodputDeltaToBestBaseline:
      gov.goodput !== null && best?.goodput !== null && best?.goodput !== undefined
        ? Math.round((gov.goodput - best.goodput) * 1000) / 1000
        : null,
    ratioToBestBaselineAtEqualGoodput: ratio(gov.successPerDollar, atEqualGoodput?.successPerDollar),
    goodPerDollarRatioToBestBaseline: ratio(gov.goodTasksPerDollar, bestGood?.goodTasksPerDollar),
    bestBaselineByGoodPerDollar: bestGood?.policy ?? null,
    regretToOracle: null,
    oracleShortOfGoodput: false,
    detectionIntervals,
    detectionIntervalsFromObservable,
    faultObservableAt,
    detectedBy,
    recommendations: recommendations.length,
    applied: recommendations.filter((r) => r.appliedAt).length,
    rolledBack: recommendations.filter((r) => r.state === 'rolled_back').length,
  };
}
