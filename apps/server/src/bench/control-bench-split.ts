import type { ScenarioName, WorkloadName } from '@governor/simulator';

// Which `bench control` runs rules may be changed for, and which judge them. A run belongs to the
// tuning set when its workload and its seed both do; every other run is held out. No rule, threshold
// or default may be changed because of a held-out run: a change is made on the tuning set and then
// judged, once, on the held-out set.

export const BENCH_SET_NAMES = ['tuning', 'held-out', 'all'] as const;
export type BenchSetName = (typeof BENCH_SET_NAMES)[number];
export type BenchRunSet = Exclude<BenchSetName, 'all'>;

export function isBenchSetName(value: string): value is BenchSetName {
  return (BENCH_SET_NAMES as readonly string[]).includes(value);
}

export const BENCH_SCENARIOS: readonly ScenarioName[] = [
  'none',
  'gpu-degradation',
  'preemption',
  'retry-storm',
  'region-outage',
  'cold-pool',
  'agentic-surge',
];

/** The workloads and seeds the control loop's rules were changed on (commit messages cite seeds 1–3). */
export const TUNING_WORKLOADS: readonly WorkloadName[] = [
  'azure-conv',
  'azure-code',
  'mooncake-conversation',
];
export const TUNING_SEEDS: readonly number[] = [1, 2, 3];
/** Workloads no rule was changed for, at any seed. */
export const HELD_OUT_WORKLOADS: readonly WorkloadName[] = ['burstgpt-1', 'burstgpt-3', 'agentic-coding'];
/** Seeds no rule was changed for: the held-out set runs every workload at these by default. */
export const HELD_OUT_SEEDS: readonly number[] = [4, 5];

export const BENCH_WORKLOADS: readonly WorkloadName[] = [...TUNING_WORKLOADS, ...HELD_OUT_WORKLOADS];

export interface BenchRun {
  scenario: ScenarioName;
  workload: WorkloadName;
  seed: number;
  set: BenchRunSet;
}

/** The one place a run is assigned to a set. */
export function classifyBenchRun(workload: WorkloadName, seed: number): BenchRunSet {
  return TUNING_WORKLOADS.includes(workload) && TUNING_SEEDS.includes(seed) ? 'tuning' : 'held-out';
}

/** `--quick`: per set, one fault-free and two fault runs, one per workload. */
export const QUICK_MATRIX: Record<BenchRunSet, readonly Omit<BenchRun, 'set'>[]> = {
  tuning: [
    { scenario: 'none', workload: 'azure-conv', seed: 1 },
    { scenario: 'gpu-degradation', workload: 'azure-code', seed: 1 },
    { scenario: 'agentic-surge', workload: 'mooncake-conversation', seed: 1 },
  ],
  'held-out': [
    { scenario: 'none', workload: 'burstgpt-1', seed: 4 },
    { scenario: 'gpu-degradation', workload: 'agentic-coding', seed: 4 },
    { scenario: 'retry-storm', workload: 'azure-conv', seed: 4 },
  ],
};

export interface BenchMatrixRequest {
  set: BenchSetName;
  quick?: boolean;
  /** Replace each set's seeds; runs that then fall into the other set are left out. */
  seeds?: readonly number[];
  scenarios?: readonly ScenarioName[];
  /** Replace each set's workloads (same rule). */
  workloads?: readonly WorkloadName[];
}

/**
 * The runs of a set: its scenarios × workloads × seeds (or its quick runs), narrowed by `scenarios`,
 * with `workloads` and `seeds` replacing the set's own, keeping only runs that belong to the set.
 * `all` is the tuning runs, then the held-out ones.
 */
export function buildBenchMatrix(request: BenchMatrixRequest): BenchRun[] {
  const sets: BenchRunSet[] = request.set === 'all' ? ['tuning', 'held-out'] : [request.set];
  const runs: BenchRun[] = [];
  for (const set of sets) {
    const scenarios = BENCH_SCENARIOS.filter((s) => !request.scenarios || request.scenarios.includes(s));
    const candidates = request.quick
      ? QUICK_MATRIX[set]
          .filter((q) => scenarios.includes(q.scenario))
          .filter((q) => !request.workloads || request.workloads.includes(q.workload))
          .flatMap((q) => (request.seeds ?? [q.seed]).map((seed) => ({ ...q, seed })))
      : scenarios.flatMap((scenario) =>
          (request.workloads ?? (set === 'tuning' ? TUNING_WORKLOADS : BENCH_WORKLOADS)).flatMap((workload) =>
            (request.seeds ?? (set === 'tuning' ? TUNING_SEEDS : HELD_OUT_SEEDS)).map((seed) => ({
              scenario,
              workload,
              seed,
            })),
          ),
        );
    for (const c of candidates) {
      const duplicate = runs.some(
        (r) => r.scenario === c.scenario && r.workload === c.workload && r.seed === c.seed,
      );
      if (!duplicate && classifyBenchRun(c.workload, c.seed) === set) runs.push({ ...c, set });
    }
  }
  return runs;
}
