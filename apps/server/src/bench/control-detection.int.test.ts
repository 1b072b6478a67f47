import { describe, expect, it } from 'vitest';
import { runControlBench } from './control-bench.ts';

// The simulator replays Mooncake's long-prompt conversations through a real Governor in lockstep
// while one pool's GPUs slow down 2.5×. Its requests run for tens of seconds, so their spans — which
// report when a request ends — show the slowdown only after a minute or more; the runtime's counters
// (tokens and engine steps against the GPU's busy time) show it within the first control interval.

describe('detecting a degraded pool on a real workload trace', () => {
  it('responds within two control intervals to a slow GPU whose requests run for tens of seconds', async () => {
    const report = await runControlBench({
      matrix: [{ scenario: 'gpu-degradation', workload: 'mooncake-conversation' }],
      durationMs: 12 * 60_000,
      seed: 1,
      explain: true,
      // Detection only: the hindsight oracle's schedules would add simulations the test does not read.
      oracle: false,
    });
    const findings = report.scenarios[0]!.governor;
    expect(findings.error).toBeUndefined();
    expect(findings.detectedBy).toMatch(/^shift_traffic .*"pool":"llama8b-h100-east"/);
    expect(findings.detectionIntervals).toBeLessThanOrEqual(2);
    // The first shift whose target is the degraded pool (a decision line is `<time> <state> <kind>
    // <model>/<pool> {action} — reason`; another pool's shift may name it among its weights).
    const first = findings.decisions!.find((d) => / shift_traffic [^ ]*\/llama8b-h100-east /.test(d))!;
    expect(first).toMatch(/its engines take [\d.]+× their usual time for the work they do/);
  }, 120_000);
});
