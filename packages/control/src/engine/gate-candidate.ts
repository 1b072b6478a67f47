import type {
  ControlConfig,
  KindAction,
  PolicyConfig,
  RecommendationKind,
  RecommendationTarget,
} from '@governor/conventions';
import { matchesTargetPattern } from '../target-key.ts';
import { secondsToNs } from '../time.ts';
import type { TargetMemory } from './control-types.ts';

// The policy gate: auto-apply is opt-in per policy (packages/control/README.md). The first policy whose match
// (kind, target) fits decides; without one, a recommendation waits for a human.

/** `step` is the action as the policy lets it apply (max_step may have shortened it). */
export type GateDecision =
  | { decision: 'auto_apply'; policy: string; step: KindAction; note: string }
  | { decision: 'dry_run'; policy: string; step: KindAction; note: string }
  | { decision: 'propose'; policy: string | null; step: KindAction; note: string };

export interface GateInput {
  step: KindAction;
  target: RecommendationTarget;
  /**
   * The state before the action (see describePrevious): max_step is measured from it. Null when not
   * known (a preview of a recommendation not yet applied): measured from no weight and no share.
   */
  previous: KindAction | null;
  confidence: number;
  /**
   * Why it waits for a human or the next tick whatever its confidence (Candidate.waits); null when it
   * does not. Only a policy with min_confidence 0 auto-applies it.
   */
  waits: string | null;
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
  const policy = findPolicy(input.policies, input.step.kind, input.target);
  if (!policy)
    return {
      decision: 'propose',
      policy: null,
      step: input.step,
      note: 'no policy matches; waiting for a human',
    };
  if (!policy.auto_apply) {
    return {
      decision: 'propose',
      policy: policy.name,
      step: input.step,
      note: `policy ${policy.name} does not auto-apply`,
    };
  }
  // A policy that asks for any confidence asks for Governor's judgement, and Governor says this one
  // waits; min_confidence 0 (the default) applies everything Governor recommends. Checked before the
  // confidence: a recommendation that waits is often one Governor is unsure of for the same reason
  // (a scale-up that does not pay for itself), and the reason says more than the number.
  if (input.waits !== null && policy.min_confidence > 0) {
    return {
      decision: 'propose',
      policy: policy.name,
      step: input.step,
      note: `policy ${policy.name} asks for confidence ${policy.min_confidence}, and this waits: ${input.waits}`,
    };
  }
  // Written so that a confidence that is not a number is below every bound.
  if (!(input.confidence >= policy.min_confidence)) {
    return {
      decision: 'propose',
      policy: policy.name,
      step: input.step,
      note: `confidence ${input.confidence} is below min_confidence ${policy.min_confidence} of policy ${policy.name}`,
    };
  }
  const cooldownS = policy.cooldown_s ?? input.control.cooldown_s;
  if (input.memory && input.atNs - input.memory.appliedNs <= secondsToNs(cooldownS)) {
    const agoS = Math.round(Number(input.atNs - input.memory.appliedNs) / 1e9);
    return {
      decision: 'propose',
      policy: policy.name,
      step: input.step,
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
        step: input.step,
        note: `policy ${policy.name} already auto-applied ${recent} actions in the last hour (max_actions_per_hour ${policy.max_actions_per_hour})`,
      };
    }
  }
  const { step, clamped } = clampStep(input.step, input.previous, policy.max_step);
  const stepNote = clamped ? `; step limited to max_step ${policy.max_step}` : '';
  if (policy.dry_run) {
    return {
      decision: 'dry_run',
      policy: policy.name,
      step,
      note: `policy ${policy.name} is dry-run: would auto-apply${stepNote}`,
    };
  }
  return {
    decision: 'auto_apply',
    policy: policy.name,
    step,
    note: `auto-applied by policy ${policy.name}${stepNote}`,
  };
}

/**
 * max_step bounds one action: replicas for scale, percentage points of any pool's weight for
 * shift_traffic and of the moved share for downgrade_model. Priority floors, breakers and retry
 * budgets have no step.
 */
export function clampStep(
  step: KindAction,
  previous: KindAction | null,
  maxStep: number | undefined,
): { step: KindAction; clamped: boolean } {
  if (maxStep === undefined) return { step, clamped: false };
  if (step.kind === 'scale') {
    const { from, to } = step.action;
    if (Math.abs(to - from) <= maxStep) return { step, clamped: false };
    return {
      step: { kind: 'scale', action: { ...step.action, to: from + Math.sign(to - from) * maxStep } },
      clamped: true,
    };
  }
  if (step.kind === 'shift_traffic') {
    const next = step.action.weights;
    const prev = previous?.kind === 'shift_traffic' ? previous.action.weights : {};
    const pools = new Set([...Object.keys(next), ...Object.keys(prev)]);
    let largest = 0;
    for (const p of pools) largest = Math.max(largest, Math.abs((next[p] ?? 0) - (prev[p] ?? 0)));
    const limit = maxStep / 100;
    if (largest <= limit || largest === 0) return { step, clamped: false };
    const k = limit / largest;
    const weights: Record<string, number> = {};
    for (const p of pools) {
      weights[p] = Math.round(((prev[p] ?? 0) + k * ((next[p] ?? 0) - (prev[p] ?? 0))) * 1000) / 1000;
    }
    return { step: { kind: 'shift_traffic', action: { ...step.action, weights } }, clamped: true };
  }
  if (step.kind === 'downgrade_model') {
    const from = previous?.kind === 'downgrade_model' ? previous.action.fraction : 0;
    const to = step.action.fraction;
    const limit = maxStep / 100;
    if (Math.abs(to - from) <= limit) return { step, clamped: false };
    return {
      step: {
        kind: 'downgrade_model',
        action: { ...step.action, fraction: Math.round((from + Math.sign(to - from) * limit) * 100) / 100 },
      },
      clamped: true,
    };
  }
  return { step, clamped: false };
}
