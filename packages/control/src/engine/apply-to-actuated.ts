import { MIN_WEIGHT_STEP } from '../detectors/detect-context.ts';
import type { KindAction, RecommendationTarget } from '@governor/conventions';
import { formatTargetKey } from '../target-key.ts';
import { secondsToNs } from '../time.ts';
import type { ActuatedState, ShiftCause } from './control-types.ts';

// Governor's belief of what is in effect on the fleet, kept current by every applied action, and the
// action that restores the state before one (what a rollback carries).

/** A shift that raises a pool's weight to at least this multiple of what it was gives it a new load. */
export const SHARE_GAIN_RATIO = 1.5;

/** The action that puts the target back the way it was before `action`. */
export function describePrevious(
  actuated: ActuatedState,
  step: KindAction,
  target: RecommendationTarget,
  observedWeights: Record<string, number> | undefined,
): KindAction {
  switch (step.kind) {
    case 'scale':
      return { kind: 'scale', action: { from: step.action.to, to: step.action.from } };
    case 'shift_traffic': {
      const model = target.model ?? '';
      const weights = actuated.weights[model] ?? observedWeights ?? {};
      return { kind: 'shift_traffic', action: { weights: { ...weights } } };
    }
    case 'circuit_break':
      return { kind: 'circuit_break', action: { open: !step.action.open } };
    case 'shed_load':
      return { kind: 'shed_load', action: { minPriority: actuated.shed[formatTargetKey(target)] ?? null } };
    case 'retry_budget':
      return {
        kind: 'retry_budget',
        action: { maxRetryRatio: actuated.retryBudget[formatTargetKey(target)] ?? null },
      };
    case 'downgrade_model': {
      const from = step.action.fromModel;
      return {
        kind: 'downgrade_model',
        action: {
          fromModel: from,
          toModel: step.action.toModel,
          fraction: actuated.downgrade[from]?.fraction ?? 0,
        },
      };
    }
  }
}

export function applyToActuated(
  actuated: ActuatedState,
  step: KindAction,
  target: RecommendationTarget,
  atNs: bigint,
  observedWeights: Record<string, number> | undefined,
  cause: ShiftCause | null = null,
): void {
  switch (step.kind) {
    case 'scale':
      if (target.pool) actuated.replicas[target.pool] = step.action.to;
      return;
    case 'shift_traffic': {
      const model = target.model ?? '';
      const weights = step.action.weights;
      const before = actuated.weights[model] ?? observedWeights;
      actuated.weights[model] = { ...weights };
      for (const [pool, w] of Object.entries(weights)) {
        const was = before?.[pool] ?? 0;
        if (w > MIN_WEIGHT_STEP && w >= SHARE_GAIN_RATIO * was) actuated.gainedNs[pool] = atNs;
      }
      if (cause === 'incident' && target.pool) {
        const incident = actuated.recovery[model] ?? { baseline: { ...(before ?? weights) }, pools: [] };
        if (!incident.pools.includes(target.pool)) incident.pools.push(target.pool);
        actuated.recovery[model] = incident;
      }
      // A pool back at (or above) its weight from before the incident has recovered.
      const recovery = actuated.recovery[model];
      if (recovery) {
        recovery.pools = recovery.pools.filter(
          (p) => (weights[p] ?? 0) < (recovery.baseline[p] ?? 0) - MIN_WEIGHT_STEP,
        );
        if (recovery.pools.length === 0) delete actuated.recovery[model];
      }
      return;
    }
    case 'circuit_break': {
      if (!target.pool) return;
      const open = step.action.open;
      const durationS = step.action.durationS ?? null;
      actuated.circuits[target.pool] = {
        open,
        untilNs: open && durationS ? atNs + secondsToNs(durationS) : null,
      };
      return;
    }
    case 'shed_load': {
      const key = formatTargetKey(target);
      const min = step.action.minPriority;
      if (min === null) delete actuated.shed[key];
      else actuated.shed[key] = min;
      return;
    }
    case 'retry_budget': {
      const key = formatTargetKey(target);
      const ratio = step.action.maxRetryRatio;
      if (ratio === null) delete actuated.retryBudget[key];
      else actuated.retryBudget[key] = ratio;
      return;
    }
    case 'downgrade_model': {
      const { fromModel, toModel, fraction } = step.action;
      if (fraction <= 0) delete actuated.downgrade[fromModel];
      else actuated.downgrade[fromModel] = { toModel, fraction };
      return;
    }
  }
}
