import { randomUUID } from 'node:crypto';
import type { ControlAction } from '@governor/conventions';
import { summarizeScope } from '../detectors/pool-signals.ts';
import type { FleetObservation } from '../observe-fleet.ts';
import { formatTargetKey } from '../target-key.ts';
import { nsToIso } from '../time.ts';
import { applyToActuated, describePrevious } from './apply-to-actuated.ts';
import type {
  Candidate,
  ControlState,
  Direction,
  RecommendationRecord,
  ScopeMetrics,
  TargetMemory,
} from './control-types.ts';
import type { EngineSettings } from './engine-settings.ts';
import { kindActionOf, setPreviousAction } from './kind-action.ts';
import { memoryKey } from './memory-key.ts';
import { type TickOutput, recordAudit, touchRecord } from './tick-output.ts';

/** Each pool's share of a model's requests over the control window of `obs`, to three places. */
export function observedShares(
  obs: FleetObservation | null,
  model: string | undefined,
): Record<string, number> | undefined {
  if (!model || !obs) return undefined;
  const pools = obs.pools.filter((p) => p.model === model);
  const total = pools.reduce((s, p) => s + (p.main?.requests ?? 0), 0);
  if (total <= 0) return undefined;
  return Object.fromEntries(
    pools.map((p) => [p.pool, Math.round(((p.main?.requests ?? 0) / total) * 1000) / 1000]),
  );
}

/** The health of a recommendation's scope in `obs` over either window. */
export function readScopeMetrics(
  obs: FleetObservation | null,
  rec: RecommendationRecord,
  which: 'main' | 'fast',
): ScopeMetrics | null {
  if (!obs) return null;
  return summarizeScope(
    obs.pools.filter((p) => rec.scopePools.includes(p.pool)),
    which,
  );
}

/**
 * Remembers the latest action on a target (its direction and, for a scale, the replica counts) for
 * the guards and the detectors: cooldowns, hysteresis and settling all start from it.
 */
export function rememberAction(
  s: ControlState,
  rec: RecommendationRecord,
  direction: Direction,
  atNs: bigint,
): void {
  const step = rec.kind === 'scale' ? (direction === rec.direction ? rec.action : rec.previousAction) : null;
  const key = memoryKey(rec.kind, rec.targetKey);
  const forShare =
    step && direction === rec.direction && rec.target.pool
      ? shareFor(s, rec, rec.target.pool, step.from, s.memory.get(key)?.forShare)
      : undefined;
  s.memory.set(key, {
    direction,
    appliedNs: atNs,
    recommendationId: rec.id,
    expectReplicas: step?.to ?? null,
    ...(step ? { fromReplicas: step.from } : {}),
    ...(forShare ? { forShare } : {}),
  });
}

/**
 * What a scale (not a rollback) leaves on record of the shifted share a pool holds replicas for. A
 * scale-up sized for a shift (a scale with a cause: plan-peer-capacity.ts) starts the record, or adds
 * to it, from the weight and replicas the pool had before; any scale-in keeps it, sized now at
 * today's weight; a scale-up for the pool's own load ends it (that load is its own). Undefined when
 * Governor routes it no weight.
 */
function shareFor(
  s: ControlState,
  rec: RecommendationRecord,
  pool: string,
  from: number,
  earlier: TargetMemory['forShare'],
): TargetMemory['forShare'] {
  const shifted = rec.cause !== null ? rec.expectedImpact.weight : undefined;
  const base =
    rec.direction === 'decrease'
      ? earlier
      : shifted && shifted.pool === pool
        ? {
            baseWeight: Math.min(shifted.from, earlier?.baseWeight ?? shifted.from),
            baseReplicas: Math.min(from, earlier?.baseReplicas ?? from),
          }
        : undefined;
  if (!base) return undefined;
  for (const [model, weights] of Object.entries(s.actuated.weights)) {
    const weight = weights[pool];
    if (weight !== undefined)
      return { model, baseWeight: base.baseWeight, baseReplicas: base.baseReplicas, weight };
  }
  return undefined;
}

/** Applies `rec` at `atNs`: what it replaces, its baseline for verification, the action to deliver. */
export function applyRecord(
  settings: EngineSettings,
  s: ControlState,
  out: TickOutput,
  obs: FleetObservation | null,
  rec: RecommendationRecord,
  atNs: bigint,
  actor: string,
  decision: 'auto_applied' | 'applied',
  note: string,
): ControlAction {
  const weights = observedShares(obs, rec.target.model);
  setPreviousAction(rec, describePrevious(s.actuated, rec, rec.target, weights));
  rec.baseline = readScopeMetrics(obs, rec, 'fast');
  applyToActuated(s.actuated, rec, rec.target, atNs, weights, rec.cause);
  rec.state = 'applied';
  rec.appliedNs = atNs;
  rec.updatedNs = atNs;
  rec.actionId = randomUUID();
  s.open.set(rec.id, rec);
  rememberAction(s, rec, rec.direction, atNs);
  const action: ControlAction = {
    ...kindActionOf(rec),
    id: rec.actionId,
    recommendationId: rec.id,
    type: 'apply',
    target: rec.target,
    at: nsToIso(atNs),
  };
  out.actions.push(action);
  out.events.push({ type: 'control.action', data: action });
  touchRecord(out, rec);
  const details = { action: rec.action, previousAction: rec.previousAction };
  recordAudit(out, settings.now, atNs, { decision, details }, actor, rec, note, 'applied');
  return action;
}

/** A new proposal from a detector's candidate. */
export function createRecord(c: Candidate, atNs: bigint): RecommendationRecord {
  return {
    ...kindActionOf(c),
    previousAction: null,
    id: randomUUID(),
    target: c.target,
    targetKey: formatTargetKey(c.target),
    direction: c.direction,
    reason: c.reason,
    evidence: c.evidence,
    expectedImpact: c.expectedImpact,
    confidence: c.confidence,
    state: 'proposed',
    policy: null,
    gate: null,
    scopePools: c.scopePools,
    cause: c.cause ?? null,
    createdNs: atNs,
    updatedNs: atNs,
    appliedNs: null,
    verifiedNs: null,
    baseline: null,
    actionId: null,
    verification: null,
    hold: null,
    waits: c.waits ?? null,
  };
}
