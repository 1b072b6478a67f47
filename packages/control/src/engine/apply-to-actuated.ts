import type { RecommendationKind, RecommendationTarget } from '@governor/conventions';
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
  kind: RecommendationKind,
  target: RecommendationTarget,
  action: Record<string, unknown>,
  observedWeights: Record<string, number> | undefined,
): Record<string, unknown> {
  switch (kind) {
    case 'scale':
      return { from: action.to, to: action.from };
    case 'shift_traffic': {
      const model = target.model ?? '';
      const weights = actuated.weights[model] ?? observedWeights ?? {};
      return { weights: { ...weights } };
    }
    case 'circuit_break':
      return { open: !(action.open === true) };
    case 'shed_load':
      return { minPriority: actuated.shed[formatTargetKey(target)] ?? null };
    case 'retry_budget':
      return { maxRetryRatio: actuated.retryBudget[formatTargetKey(target)] ?? null };
    case 'downgrade_model': {
      const from = String(action.fromModel);
      return { fromModel: from, toModel: action.toModel, fraction: actuated.downgrade[from]?.fraction ?? 0 };
    }
  }
}

export function applyToActuated(
  actuated: ActuatedState,
  kind: RecommendationKind,
  target: RecommendationTarget,
  action: Record<string, unknown>,
  atNs: bigint,
  observedWeights: Record<string, number> | undefined,
  cause: ShiftCause | null = null,
): void {
  switch (kind) {
    case 'scale':
      if (target.pool) actuated.replicas[target.pool] = Number(action.to);
      return;
    case 'shift_traffic': {
      const model = target.model ?? '';
      const weights = (action.weights ?? {}) as Record<string, number>;
      const before = actuated.weights[model] ?? observedWeights;
      actuated.weights[model] = { ...weights };
      for (const [pool, w] of Object.entries(weights)) {
        const was = before?.[pool] ?? 0;
        if (w > 0.02 && w >= SHARE_GAIN_RATIO * was) actuated.gainedNs[pool] = atNs;
      }
      if (cause === 'incident' && target.pool) {
        const incident = actuated.recovery[model] ?? { baseline: { ...(before ?? weights) }, pools: [] };
        if (!incident.pools.includes(target.pool)) incident.pools.push(target.pool);
        actuated.recovery[model] = incident;
      }
      // A pool back at (or above) its weight from before the incident has recovered.
      const recovery = actuated.recovery[model];
      if (recovery) {
        recovery.pools = recovery.pools.filter((p) => (weights[p] ?? 0) < (recovery.baseline[p] ?? 0) - 0.02);
        if (recovery.pools.length === 0) delete actuated.recovery[model];
      }
      return;
    }
    case 'circuit_break': {
      if (!target.pool) return;
      const open = action.open === true;
      const durationS = typeof action.durationS === 'number' ? action.durationS : null;
      actuated.circuits[target.pool] = {
        open,
        untilNs: open && durationS ? atNs + secondsToNs(durationS) : null,
      };
      return;
    }
    case 'shed_load': {
      const key = formatTargetKey(target);
      const min = action.minPriority;
      if (min === null || min === undefined) delete actuated.shed[key];
      else actuated.shed[key] = Number(min);
      return;
    }
    case 'retry_budget': {
      const key = formatTargetKey(target);
      const ratio = action.maxRetryRatio;
      if (ratio === null || ratio === undefined) delete actuated.retryBudget[key];
      else actuated.retryBudget[key] = Number(ratio);
      return;
    }
    case 'downgrade_model': {
      const from = String(action.fromModel);
      const fraction = Number(action.fraction ?? 0);
      if (fraction <= 0) delete actuated.downgrade[from];
      else actuated.downgrade[from] = { toModel: String(action.toModel), fraction };
      return;
    }
  }
}
