import { describe, expect, it } from 'vitest';
import type { EngineWork } from '@governor/signals';
import { addEngineWindow, type EngineTimeFit, predictBusyMs, solveEngineFit } from './fit-engine-time.ts';

// A batched engine: 10 ms per step, 0.2 ms per prompt token, 0.03 ms per sequence-token decoded.
const busy = (steps: number, prompt: number, generated: number, slowdown = 1) =>
  (10 * steps + 0.2 * prompt + 0.03 * generated) * slowdown;

function window(steps: number, prompt: number, generated: number, slowdown = 1): EngineWork {
  return {
    steps,
    promptTokens: prompt,
    generationTokens: generated,
    busyMs: busy(steps, prompt, generated, slowdown),
  };
}

function fitOf(windows: EngineWork[]): EngineTimeFit {
  let fit: EngineTimeFit | null = null;
  for (const w of windows) fit = addEngineWindow(fit, w, 20);
  return fit!;
}

describe('engine time fit', () => {
  it('recovers the step, prefill and decode costs from windows of different mixes', () => {
    const fit = fitOf([
      window(900, 40_000, 20_000),
      window(1500, 10_000, 60_000),
      window(400, 90_000, 5_000),
      window(2000, 30_000, 100_000),
    ]);
    const [step, prompt, decode] = solveEngineFit(fit)!;
    expect(step).toBeCloseTo(10, 3);
    expect(prompt).toBeCloseTo(0.2, 5);
    expect(decode).toBeCloseTo(0.03, 5);
  });

  it('expects a mix it never saw to take its usual time, and a slow GPU to take longer for the same work', () => {
    const fit = fitOf([
      window(900, 40_000, 20_000),
      window(1500, 10_000, 60_000),
      window(400, 90_000, 5_000),
    ]);
    const burst = window(3000, 200_000, 150_000);
    expect(burst.busyMs / predictBusyMs(fit, burst)!).toBeCloseTo(1, 3);
    const slow = window(700, 30_000, 15_000, 2.5);
    expect(slow.busyMs / predictBusyMs(fit, slow)!).toBeCloseTo(2.5, 3);
  });

  it('leaves out a term the windows cannot tell apart instead of giving it a negative cost', () => {
    // One sequence at a time: every step decodes exactly one token, so steps and tokens move together.
    const fit = fitOf([window(1000, 20_000, 1000), window(2000, 50_000, 2000), window(500, 5000, 500)]);
    const coef = solveEngineFit(fit)!;
    expect(coef.every((c) => c >= 0)).toBe(true);
    const next = window(1500, 30_000, 1500);
    expect(next.busyMs / predictBusyMs(fit, next)!).toBeCloseTo(1, 3);
  });

  it('lets old windows fade: after the engine changed, the fit follows the new one', () => {
    const old = [window(900, 40_000, 20_000), window(1500, 10_000, 60_000), window(400, 90_000, 5_000)];
    const faster = (w: EngineWork): EngineWork => ({ ...w, busyMs: w.busyMs * 0.5 });
    let fit: EngineTimeFit | null = null;
    for (const w of old) fit = addEngineWindow(fit, w, 5);
    for (let i = 0; i < 30; i++) fit = addEngineWindow(fit, faster(old[i % 3]!), 5);
    const probe = faster(window(1000, 30_000, 30_000));
    expect(probe.busyMs / predictBusyMs(fit!, probe)!).toBeCloseTo(1, 2);
  });
});
