import { describe, expect, it } from 'vitest';
import { createSeq, driveReplica } from '../../test/drive-replica.ts';
import { MODEL_70B, MODEL_8B } from './fleet-spec.ts';

// Published reference ranges (llm-d inference simulator docs), checked on the real
// replica engine: TTFT of a lone request on an idle replica gives the prefill intercept and slope;
// token spacing of a steady batch gives the inter-token latency.
const CASES = [
  {
    label: '8B on H100',
    gpuType: 'H100',
    model: MODEL_8B,
    gpus: 1,
    fixed: [25, 40],
    perToken: [0.15, 0.3],
    itl: [10, 15],
  },
  {
    label: '70B TP4 on H100',
    gpuType: 'H100',
    model: MODEL_70B,
    gpus: 4,
    fixed: [70, 110],
    perToken: [0.6, 0.9],
    itl: [25, 40],
  },
] as const;

function measureIsolatedTtftMs(c: (typeof CASES)[number], promptTokens: number): number {
  const driver = driveReplica({ gpuType: c.gpuType, model: c.model, gpusPerReplica: c.gpus });
  const seq = createSeq(promptTokens, 2);
  driver.arrive(seq, 0);
  driver.run();
  return seq.firstTokenMs;
}

describe.each(CASES)('step-time model, $label', (c) => {
  it('prefill: fixed cost and per-token cost lie in the published ranges', () => {
    const small = measureIsolatedTtftMs(c, 256);
    const large = measureIsolatedTtftMs(c, 4096);
    const perTokenMs = (large - small) / (4096 - 256);
    const fixedMs = small - perTokenMs * 256;
    expect(perTokenMs).toBeGreaterThanOrEqual(c.perToken[0]);
    expect(perTokenMs).toBeLessThanOrEqual(c.perToken[1]);
    expect(fixedMs).toBeGreaterThanOrEqual(c.fixed[0]);
    expect(fixedMs).toBeLessThanOrEqual(c.fixed[1]);
  });

  it('inter-token latency of a lone stream lies in the published range', () => {
    const driver = driveReplica({ gpuType: c.gpuType, model: c.model, gpusPerReplica: c.gpus });
    const seq = createSeq(128, 200);
    driver.arrive(seq, 0);
    driver.run();
    const itlMs = (seq.lastTokenMs - seq.firstTokenMs) / (200 - 1);
    expect(itlMs).toBeGreaterThanOrEqual(c.itl[0]);
    expect(itlMs).toBeLessThanOrEqual(c.itl[1]);
  });

  it.each([8, 32, 64, 128])(
    'decode step with %i sequences in the batch lies in the inter-token range',
    (batch) => {
      const driver = driveReplica({ gpuType: c.gpuType, model: c.model, gpusPerReplica: c.gpus });
      for (let i = 0; i < batch; i++) driver.arrive(createSeq(64, 500), 0);
      const decoding = driver.runUntil(
        () => driver.replica.mode === 'decode' && driver.replica.running.length === batch,
      );
      expect(decoding).toBe(true);
      expect(driver.replica.stepMs).toBeGreaterThanOrEqual(c.itl[0]);
      expect(driver.replica.stepMs).toBeLessThanOrEqual(c.itl[1]);
    },
  );
});
