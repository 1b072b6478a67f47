import { describe, expect, it } from 'vitest';
import type { ParsedArgs } from '../cli/parse-args.ts';
import { parseBenchControlRuns } from './control-bench-command.ts';
import {
  BENCH_SCENARIOS,
  HELD_OUT_SEEDS,
  HELD_OUT_WORKLOADS,
  TUNING_SEEDS,
  TUNING_WORKLOADS,
  classifyBenchRun,
} from './control-bench-split.ts';

const parse = (flags: ParsedArgs['flags']) => parseBenchControlRuns({ positional: [], flags });
const runsOf = (flags: ParsedArgs['flags']) => {
  const parsed = parse(flags);
  if ('error' in parsed) throw new Error(parsed.error);
  return parsed.runs;
};

describe('bench control sets', () => {
  it('runs both sets by default, each run once and in the set its workload and seed belong to', () => {
    const runs = runsOf({});
    const keys = runs.map((r) => `${r.scenario}|${r.workload}|${r.seed}`);
    expect(new Set(keys).size).toBe(runs.length);
    for (const r of runs) expect(r.set).toBe(classifyBenchRun(r.workload, r.seed));
    const tuning = runs.filter((r) => r.set === 'tuning');
    const heldOut = runs.filter((r) => r.set === 'held-out');
    expect(tuning).toHaveLength(BENCH_SCENARIOS.length * TUNING_WORKLOADS.length * TUNING_SEEDS.length);
    // Held out: every workload at the held-out seeds, including the never-tuned workloads.
    expect(heldOut).toHaveLength(
      BENCH_SCENARIOS.length * (TUNING_WORKLOADS.length + HELD_OUT_WORKLOADS.length) * HELD_OUT_SEEDS.length,
    );
    expect(new Set(heldOut.map((r) => r.workload))).toEqual(
      new Set([...TUNING_WORKLOADS, ...HELD_OUT_WORKLOADS]),
    );
    expect(heldOut.every((r) => !TUNING_SEEDS.includes(r.seed))).toBe(true);
    expect(tuning.every((r) => !HELD_OUT_WORKLOADS.includes(r.workload))).toBe(true);
  });

  it('keeps a tuning seed of a never-tuned workload in the held-out set, and out of the tuning set', () => {
    const heldOut = runsOf({ set: 'held-out', seeds: '1,2', scenario: 'fault-free' });
    expect(heldOut.map((r) => `${r.workload}@${r.seed}`).sort()).toEqual(
      HELD_OUT_WORKLOADS.flatMap((w) => [`${w}@1`, `${w}@2`]).sort(),
    );
    const tuning = runsOf({ set: 'tuning', seeds: '1,2', scenario: 'fault-free' });
    expect(tuning.map((r) => r.workload).sort()).toEqual([...TUNING_WORKLOADS, ...TUNING_WORKLOADS].sort());
    expect(parse({ set: 'tuning', seeds: '4' })).toEqual({
      error: expect.stringMatching(
        /^nothing to run: no scenario × workload × seed of the tuning set matches/,
      ),
    });
  });

  it('still takes --seed N, and narrows by scenario and workload', () => {
    expect(runsOf({ seed: '2', scenario: 'fault-free,retry-storm', workload: 'azure-conv' })).toEqual([
      { scenario: 'none', workload: 'azure-conv', seed: 2, set: 'tuning' },
      { scenario: 'retry-storm', workload: 'azure-conv', seed: 2, set: 'tuning' },
    ]);
    expect(runsOf({ seed: '7', workload: 'azure-conv', scenario: 'none' })).toEqual([
      { scenario: 'none', workload: 'azure-conv', seed: 7, set: 'held-out' },
    ]);
  });

  it('runs three quick runs per set', () => {
    const runs = runsOf({ quick: true });
    expect(runs.filter((r) => r.set === 'tuning')).toHaveLength(3);
    expect(runs.filter((r) => r.set === 'held-out')).toHaveLength(3);
  });

  it('refuses an unknown set, a seed that is not a whole number, and --seed with --seeds', () => {
    expect(parse({ set: 'train' })).toEqual({ error: 'unknown set "train"; use tuning, held-out, all' });
    expect(parse({ seeds: '1,x' })).toEqual({ error: 'seed "x" is not a whole number' });
    expect(parse({ seeds: '1', seed: '2' })).toEqual({ error: 'give --seeds or --seed, not both' });
  });
});
