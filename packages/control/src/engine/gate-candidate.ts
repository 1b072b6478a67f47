import type {
  ControlConfig,
  PolicyConfig,
  RecommendationKind,
  RecommendationTarget,
} from '@governor/conventions';
import { matchesTargetPattern } from '../target-key.ts';
import { secondsToNs } from '../time.ts';
import type { TargetMemory } from './control-types.ts';

// The policy gate: auto-apply is opt-in per policy (packages/control/README.md). The first policy whose match
// (kind, target) fits decides; without one, a recommendation waits for a human.

export type GateDecision =
  | { decision: 'auto_apply'; policy: string; action: Record<string, unknown>; note: string }
  | { decision: 'dry_run'; policy: string; action: Record<string, unknown>; note: string }
  | { decision: 'propose'; policy: string | null; action: Record<string, unknown>; note: string };

export interface GateInput {
  kind: RecommendationKind;
  target: RecommendationTarget;
  action: Record<string, unknown>;
  /** The state before the action (see describePrevious): max_step is measured from it. */
  previous: Record<string, unknown>;
  confidence: number;
  atNs: bigint;
  policies: readonly PolicyConfig[];
  control: ControlConfig;
  /** Last action applied on this (kind, target), by anyone. */
  memory: TargetMemory | undefined;
  /** Event times of this tick's and earlier auto-applied actions per policy. */
  autoApplied: ReadonlyMap<string, readonly bigint[]>;
}

export function findPolicy(
  policies: readonly PolicyConfig[],
  kind: RecommendationKind,
  target: RecommendationTarget,
): PolicyConfig | undefined {
  return policies.find(
    (p) =>
      (p.match.kind === undefined || p.match.kind.includes(kind)) &&
      matchesTargetPattern(target, p.match.target),
  );
}

export function gateCandidate(input: GateInput): GateDecision {
  const policy = findPolicy(input.policies, input.kind, input.target);
  if (!policy)
    return {
      decision: 'propose',
      policy: null,
      action: input.action,
      note: 'no policy matches; waiting for a human',
    };
  if (!policy.auto_apply) {
    return {
      decision: 'propose',
      policy: policy.name,
      action: input.action,
      note: `policy ${policy.name} does not auto-apply`,
    };
  }
  if (input.confidence < policy.min_confidence) {
    return {
      decision: 'propose',
      policy: policy.name,
      action: input.action,
      note: `confidence ${input.confidence} is below min_confidence ${policy.min_confidence} of policy ${policy.name}`,
    };
  }
  const cooldownS = policy.cooldown_s ?? input.control.cooldown_s;
  if (input.memory && input.atNs - input.memory.appliedNs <= secondsToNs(cooldownS)) {
    const agoS = Math.round(Number(input.atNs - input.memory.appliedNs) / 1e9);
    return {
      decision: 'propose',
      policy: policy.name,
      action: input.action,
      note: `target acted on ${agoS} s ago, inside policy ${policy.name}'s ${cooldownS} s cooldown`,
    };
  }
  if (policy.max_actions_per_hour !== undefined) {
    const hourAgo = input.atNs - secondsToNs(3600);
    const recent = (input.autoApplied.get(policy.name) ?? []).filter((t) => t > hourAgo).length;
    if (recent >= policy.max_actions_per_hour) {
      return {
        decision: 'propose',
        policy: policy.name,
        action: input.action,
        note: `policy ${policy.name} already auto-applied ${recent} actions in the last hour (max_actions_per_hour ${policy.max_actions_per_hour})`,
      };
    }
  }
  const { action, clamped } = clampStep(input.kind, input.action, input.previous, policy.max_step);
  const stepNote = clamped ? `; step limited to max_step ${policy.max_step}` : '';
  if (policy.dry_run) {
    return {
      decision: 'dry_run',
      policy: policy.name,
      action,
      note: `policy ${policy.name} is dry-run: would auto-apply${stepNote}`,
    };
  }
  return {
    decision: 'auto_apply',
    policy: policy.name,
    action,
    note: `auto-applied by policy ${policy.name}${stepNote}`,
  };
}

/**
 * max_step bounds one action: replicas for scale, percentage points of any pool's weight for
 * shift_traffic and of the moved share for downgrade_model. Priority floors, breakers and retry
 * budgets have no step.
 */
export function clampStep(
  kind: RecommendationKind,
  action: Record<string, unknown>,
  previous: Record<string, unknown>,
  maxStep: number | undefined,
): { action: Record<string, unknown>; clamped: boolean } {
  if (maxStep === undefined) return { action, clamped: false };
  if (kind === 'scale') {
    const from = Number(action.from);
    const to = Number(action.to);
    if (Math.abs(to - from) <= maxStep) return { action, clamped: false };
    return { action: { ...action, to: from + Math.sign(to - from) * maxStep }, clamped: true };
  }
  if (kind === 'shift_traffic') {
    const next = (action.weights ?? {}) as Record<string, number>;
    const prev = (previous.weights ?? {}) as Record<string, number>;
    const pools = new Set([...Object.keys(next), ...Object.keys(prev)]);
    let largest = 0;
    for (const p of pools) largest = Math.max(largest, Math.abs((next[p] ?? 0) - (prev[p] ?? 0)));
    const limit = maxStep / 100;
    if (largest <= limit || largest === 0) return { action, clamped: false };
    const k = limit / largest;
    const weights: Record<string, number> = {};
    for (const p of pools) {
      weights[p] = Math.round(((prev[p] ?? 0) + k * ((next[p] ?? 0) - (prev[p] ?? 0))) * 1000) / 1000;
    }
    return { action: { ...action, weights }, clamped: true };
  }
  if (kind === 'downgrade_model') {
    const from = Number(previous.fraction ?? 0);
    const to = Number(action.fraction ?? 0);
    const limit = maxStep / 100;
    if (Math.abs(to - from) <= limit) return { action, clamped: false };
    return {
      action: { ...action, fraction: Math.round((from + Math.sign(to - from) * limit) * 100) / 100 },
      clamped: true,
    };
  }
  return { action, clamped: false };
}
