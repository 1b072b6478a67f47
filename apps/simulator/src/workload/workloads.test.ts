import { describe, expect, it } from 'vitest';
import { WORKLOAD_NAMES, createWorkload } from './create-workload.ts';
import { getShapeFactor } from './generate-synthetic-workload.ts';
import { parseAzureTimestampMs } from './load-trace-workloads.ts';
import { resolveDataDir } from './read-data-file.ts';

const dataDir = resolveDataDir();
const HOUR = 3_600_000;

describe('workloads', () => {
  it.each(WORKLOAD_NAMES)('%s builds sorted tasks with valid steps', (name) => {
    const workload = createWorkload(name, { seed: 1, durationMs: HOUR, dataDir });
    expect(workload.tasks.length).toBeGreaterThan(0);
    for (let i = 1; i < workload.tasks.length; i++)
      expect(workload.tasks[i]!.startMs).toBeGreaterThanOrEqual(workload.tasks[i - 1]!.startMs);
    for (const task of workload.tasks.slice(0, 200)) {
      expect(task.startMs).toBeLessThan(HOUR);
      expect(task.steps.length).toBeGreaterThan(0);
      for (const step of task.steps) {
        expect(step.inputTokens).toBeGreaterThan(0);
        expect(step.outputTokens).toBeGreaterThan(0);
      }
    }
  });

  it('replays Azure at its real 2023 timestamps, every row once per trace span', () => {
    // The last row is 3501.72 s after the first; the loop restarts one mean gap later.
    const workload = createWorkload('azure-conv', { seed: 1, durationMs: 3_501_800, dataDir });
    expect(new Date(workload.startEpochMs).toISOString()).toBe('2023-11-16T18:15:46.680Z');
    expect(workload.tasks.length).toBe(19_366);
    expect(parseAzureTimestampMs('2023-11-16 18:17:03.9799600') % 1000).toBeCloseTo(979.96, 3);
  });

  it('scales time and rate', () => {
    const spanMs = 3_436_000;
    const base = createWorkload('azure-code', { seed: 1, durationMs: spanMs, dataDir });
    const faster = createWorkload('azure-code', { seed: 1, durationMs: spanMs, dataDir, timeScale: 0.5 });
    const doubled = createWorkload('azure-code', { seed: 1, durationMs: spanMs, dataDir, rateMultiplier: 2 });
    const thinned = createWorkload('azure-code', {
      seed: 1,
      durationMs: spanMs,
      dataDir,
      rateMultiplier: 0.5,
    });
    expect(base.tasks.length).toBe(8819);
    expect(faster.tasks.length / base.tasks.length).toBeCloseTo(2, 2);
    expect(doubled.tasks.length / base.tasks.length).toBeCloseTo(2, 2);
    expect(thinned.tasks.length / base.tasks.length).toBeCloseTo(0.5, 1);
  });

  it('keeps Mooncake prefix-block hashes and uses a fixed epoch without --start', () => {
    const workload = createWorkload('mooncake-conversation', {
      seed: 1,
      durationMs: 3_537_001,
      dataDir,
      rateMultiplier: 1,
    });
    expect(workload.startEpochMs).toBe(Date.UTC(2024, 0, 1));
    expect(workload.tasks.length).toBe(12_031);
    expect(workload.tasks[0]!.steps[0]!.prefix!.head.length).toBeGreaterThan(0);
    const started = createWorkload('mooncake-synthetic', {
      seed: 1,
      durationMs: HOUR,
      dataDir,
      startEpochMs: Date.UTC(2025, 5, 1),
    });
    expect(started.startEpochMs).toBe(Date.UTC(2025, 5, 1));
  });

  it('groups BurstGPT_3 sessions into conversation tasks and skips failed source rows', () => {
    const workload = createWorkload('burstgpt-3', {
      seed: 1,
      durationMs: 124_359,
      dataDir,
      timeScale: 0.003,
    });
    const withSessions = workload.tasks.filter((t) => t.conversationId);
    expect(withSessions.length).toBeGreaterThan(100);
    expect(Math.max(...withSessions.map((t) => t.steps.length))).toBe(24);
  });

  it('sizes synthetic workflows as documented: chat ≈ 1 call, copilot 10–20, research ≈ 50, autonomous thousands', () => {
    const steps = (name: (typeof WORKLOAD_NAMES)[number]) => {
      const tasks = createWorkload(name, { seed: 4, durationMs: HOUR, dataDir }).tasks;
      return tasks.reduce((s, t) => s + t.steps.length, 0) / tasks.length;
    };
    expect(steps('synthetic-chat')).toBeLessThan(1.5);
    expect(steps('synthetic-copilot')).toBeGreaterThanOrEqual(10);
    expect(steps('synthetic-copilot')).toBeLessThanOrEqual(20);
    expect(steps('synthetic-research')).toBeGreaterThan(40);
    expect(steps('synthetic-research')).toBeLessThan(60);
    expect(steps('synthetic-autonomous')).toBeGreaterThanOrEqual(1000);
  });

  it('shapes synthetic arrivals: diurnal trough at the start and peak halfway, bursts ×3', () => {
    expect(getShapeFactor('diurnal', 0, HOUR)).toBeCloseTo(0.4, 6);
    expect(getShapeFactor('diurnal', HOUR / 2, HOUR)).toBeCloseTo(1.6, 6);
    expect(getShapeFactor('burst', 11 * 60_000, HOUR)).toBe(3);
    expect(getShapeFactor('burst', 15 * 60_000, HOUR)).toBe(1);
  });

  it('names the missing file and the override when the data folder is wrong', () => {
    expect(() =>
      createWorkload('azure-conv', { seed: 1, durationMs: HOUR, dataDir: '/nonexistent' }),
    ).toThrow(/azure_llm_2023_conv\.csv.*GOVERNOR_DATA_DIR/);
  });
});
