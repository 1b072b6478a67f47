import type { EngineWork } from '@governor/signals';

// How long a pool's engines take for the work they do. A continuously batched engine's step costs a
// fixed overhead, plus time per prompt token it prefills, plus time per sequence it decodes a token
// for, so over a window: busy ms ≈ a·steps + b·prompt tokens + c·generated tokens. Fitted per pool by
// least squares over its healthy windows (older ones fade), the fit predicts how long this window's
// work should have taken. Load and prompt mix change the work, not the fit; a GPU that runs slow
// takes longer for the same work — and the runtime's counters show it within one window, while a
// request's span reports only when the request ends.

const TERMS = 3;

/**
 * Healthy windows before the fit is trusted: twice its terms, so its residuals keep as many degrees
 * of freedom as it has coefficients (with exactly as many windows as terms every fit is exact and
 * says nothing about the next window).
 */
export const ENGINE_FIT_MIN_WINDOWS = 2 * TERMS;

export interface EngineTimeFit {
  /** Decayed sums of x·xᵀ (row-major 3×3), x·y and y² over the healthy windows. */
  xtx: number[];
  xty: number[];
  yty: number;
  /** Windows added (not decayed). */
  samples: number;
}

function terms(work: EngineWork): number[] {
  return [work.steps, work.promptTokens, work.generationTokens];
}

/** The fit with one more healthy window; earlier windows weigh `1 − 1/memoryWindows` less each time. */
export function addEngineWindow(
  fit: EngineTimeFit | null,
  work: EngineWork,
  memoryWindows: number,
): EngineTimeFit {
  const keep = fit ? 1 - 1 / Math.max(1, memoryWindows) : 0;
  const x = terms(work);
  const y = work.busyMs;
  const xtx = new Array<number>(TERMS * TERMS).fill(0);
  const xty = new Array<number>(TERMS).fill(0);
  for (let i = 0; i < TERMS; i++) {
    xty[i] = keep * (fit?.xty[i] ?? 0) + x[i]! * y;
    for (let j = 0; j < TERMS; j++) {
      xtx[i * TERMS + j] = keep * (fit?.xtx[i * TERMS + j] ?? 0) + x[i]! * x[j]!;
    }
  }
  return { xtx, xty, yty: keep * (fit?.yty ?? 0) + y * y, samples: (fit?.samples ?? 0) + 1 };
}

/**
 * Coefficients (ms per step, per prompt token, per generated token) with the least squared error
 * among those that are all non-negative — a term the windows cannot tell apart from another is left
 * out rather than given a negative cost. Null when no subset of terms can be solved.
 */
export function solveEngineFit(fit: EngineTimeFit): number[] | null {
  let best: { coef: number[]; sse: number } | null = null;
  for (let mask = 1; mask < 1 << TERMS; mask++) {
    const idx = [...Array(TERMS).keys()].filter((i) => mask & (1 << i));
    const a = idx.map((i) => idx.map((j) => fit.xtx[i * TERMS + j]!));
    const b = idx.map((i) => fit.xty[i]!);
    const solved = solveScaled(a, b);
    if (!solved || solved.some((c) => c < 0)) continue;
    let sse = fit.yty;
    for (let p = 0; p < idx.length; p++) {
      sse -= 2 * solved[p]! * b[p]!;
      for (let q = 0; q < idx.length; q++) sse += solved[p]! * a[p]![q]! * solved[q]!;
    }
    if (!best || sse < best.sse - 1e-9 * Math.abs(best.sse)) {
      const coef = new Array<number>(TERMS).fill(0);
      idx.forEach((i, p) => {
        coef[i] = solved[p]!;
      });
      best = { coef, sse };
    }
  }
  return best?.coef ?? null;
}

/** Busy ms the fit expects for this work; null without a solvable fit. */
export function predictBusyMs(fit: EngineTimeFit, work: EngineWork): number | null {
  const coef = solveEngineFit(fit);
  if (!coef) return null;
  const x = terms(work);
  const predicted = coef.reduce((sum, c, i) => sum + c * x[i]!, 0);
  return predicted > 0 ? predicted : null;
}

/** Solves a·x = b after scaling to a unit diagonal (the terms differ by orders of magnitude). */
function solveScaled(a: number[][], b: number[]): number[] | null {
  const n = b.length;
  const scale = a.map((row, i) => (row[i]! > 0 ? 1 / Math.sqrt(row[i]!) : 0));
  if (scale.some((s) => s === 0)) return null;
  const m = a.map((row, i) => [...row.map((v, j) => v * scale[i]! * scale[j]!), b[i]! * scale[i]!]);
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++) if (Math.abs(m[r]![col]!) > Math.abs(m[pivot]![col]!)) pivot = r;
    // Nearly collinear terms: this subset cannot be solved reliably.
    if (Math.abs(m[pivot]![col]!) < 1e-9) return null;
    [m[col], m[pivot]] = [m[pivot]!, m[col]!];
    for (let r = 0; r < n; r++) {
      if (r === col) continue;
      const f = m[r]![col]! / m[col]![col]!;
      for (let c = col; c <= n; c++) m[r]![c]! -= f * m[col]![c]!;
    }
  }
  return m.map((row, i) => (row[n]! / row[i]!) * scale[i]!);
}
