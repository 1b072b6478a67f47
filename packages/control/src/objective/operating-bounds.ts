import type { ControlConfig } from '@governor/conventions';
import type { ControlTuning } from '../engine/control-tuning.ts';

// The bounds every policy reads off the operator's two objective knobs instead of numbers of its
// own: slo_attainment_target says how many requests may fail or miss the SLO (the error budget), and
// target_utilization says how loaded a pool is sized to run (and so when it is too loaded).

/**
 * Share of requests that may fail or miss the SLO while the fleet still meets its objective:
 * 1 − slo_attainment_target (0.05 at the default 0.95). A pool, a model or an action that fails more
 * than this on its own breaks the objective; less is within what the operator accepts.
 */
export function errorBudget(control: Pick<ControlConfig, 'slo_attainment_target'>): number {
  return roundBound(1 - control.slo_attainment_target);
}

/**
 * Utilization past which a pool is scaled up: halfway from target_utilization to saturation (0.85 at
 * the default 0.7). A scale-up sizes back to the target, so the band between the two is the
 * hysteresis; a trigger at or below the target would scale up pools sized exactly as asked.
 */
export function scaleUpUtilization(control: Pick<ControlConfig, 'target_utilization'>): number {
  return roundBound(control.target_utilization + (1 - control.target_utilization) / 2);
}

/** Bounds compare with measured ratios such as 1/20: keep 1 − 0.95 at 0.05, not 0.05000000000000004. */
function roundBound(value: number): number {
  return Math.round(value * 1e9) / 1e9;
}

/**
 * A fall of goodput no fewer errors excuse: clearly (slowRatio ×) past the whole error budget (0.1 at
 * the defaults) — more requests out of the SLO than the objective allows in all.
 */
export function collapseShare(
  control: Pick<ControlConfig, 'slo_attainment_target'>,
  tuning: Pick<ControlTuning, 'slowRatio'>,
): number {
  return roundBound(errorBudget(control) * tuning.slowRatio);
}

/**
 * Failures clearly inside the error budget (slowRatio × below it, 0.025 at the defaults), as a TTFT
 * p95 clearly inside the SLO is slowRatio × below it: low enough to call a fleet or a pool calm —
 * to lift a retry budget, to move traffic for cost alone.
 */
export function calmErrorRate(
  control: Pick<ControlConfig, 'slo_attainment_target'>,
  tuning: Pick<ControlTuning, 'slowRatio'>,
): number {
  return roundBound(errorBudget(control) / tuning.slowRatio);
}

/**
 * Utilization of a peer with room to take traffic moved onto it: clearly (beyond the as-usual band,
 * usualRatio ×) below target_utilization (0.54 at the defaults), so what it takes does not carry it
 * past the load it is sized for.
 */
export function roomUtilization(
  control: Pick<ControlConfig, 'target_utilization'>,
  tuning: Pick<ControlTuning, 'usualRatio'>,
): number {
  return roundBound(control.target_utilization / tuning.usualRatio);
}
