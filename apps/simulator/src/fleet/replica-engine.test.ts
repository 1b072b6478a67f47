import { describe, expect, it } from 'vitest';
import { createSeq, driveReplica } from '../../test/drive-replica.ts';
import { MODEL_8B } from './fleet-spec.ts';

describe('replica engine', () => {
  it('queues requests while the KV cache is full and admits them as sequences finish', () => {
    const driver = driveReplica({ gpuType: 'H100', model: MODEL_8B, kvCapacityTokens: 10_000 });
    const seqs = Array.from({ length: 6 }, () => createSeq(3000, 50));
    for (const seq of seqs) driver.arrive(seq, 0);
    // 3 × 3000 prompt tokens fit in 10,000; the other three wait for KV space.
    expect(driver.runUntil(() => driver.replica.running.length === 3)).toBe(true);
    expect(driver.replica.waitingCount).toBe(3);
    expect(driver.replica.kvUsed).toBeLessThanOrEqual(10_000);
    driver.run();
    expect(driver.finished.map((f) => f.errorType)).toEqual(Array(6).fill(null));
    const firstBatchEnd = Math.max(...seqs.slice(0, 3).map((s) => s.lastTokenMs));
    for (const seq of seqs.slice(3)) expect(seq.admitMs).toBeGreaterThan(0);
    expect(Math.min(...seqs.slice(3).map((s) => s.admitMs))).toBeLessThanOrEqual(firstBatchEnd);
  });

  it('preempts the newest sequence under memory pressure and still finishes everything', () => {
    // Prompts fit, but their decode growth does not: 2 × (2000 + 1500) > 6000.
    const driver = driveReplica({ gpuType: 'H100', model: MODEL_8B, kvCapacityTokens: 6000 });
    const a = createSeq(2000, 1500);
    const b = createSeq(2000, 1500);
    driver.arrive(a, 0);
    driver.arrive(b, 0);
    driver.run();
    expect(a.preemptions + b.preemptions).toBeGreaterThan(0);
    expect(driver.finished).toHaveLength(2);
    expect(a.generated).toBe(1500);
    expect(b.generated).toBe(1500);
    expect(driver.replica.kvUsed).toBe(0);
  });

  it('reuses cached prefix blocks, cutting prefill work and TTFT', () => {
    const driver = driveReplica({ gpuType: 'H100', model: MODEL_8B });
    const prefix = { head: [1, 2, 3, 4, 5, 6, 7, 8], rangeBase: 0, rangeCount: 0 };
    const cold = createSeq(4200, 2, prefix);
    driver.arrive(cold, 0);
    driver.run();
    const warm = createSeq(4200, 2, prefix);
    driver.arrive(warm, 10_000);
    driver.run();
    expect(cold.cachedTokens).toBe(0);
    expect(warm.cachedTokens).toBe(8 * 512);
    expect(warm.firstTokenMs - warm.arriveMs).toBeLessThan((cold.firstTokenMs - cold.arriveMs) / 4);
  });

  it('splits long prompts into chunks of the batched-token budget', () => {
    const driver = driveReplica({ gpuType: 'H100', model: MODEL_8B, maxBatchedTokens: 2048 });
    const seq = createSeq(6000, 2);
    driver.arrive(seq, 0);
    driver.run();
    // Three chunked prefill steps each pay the fixed prefill overhead (30 ms).
    expect(seq.firstTokenMs).toBeCloseTo(3 * 30 + 6000 * 0.2, 6);
  });
});
