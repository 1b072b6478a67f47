import type { ControlConfig } from '@governor/conventions';
import type { FleetObservation } from '../observe-fleet.ts';
import { secondsToNs } from '../time.ts';
import type { Candidate, ControlState, Hold } from './control-types.ts';
import type { EngineSettings } from './engine-settings.ts';
import { decisionKey, memoryKey } from './memory-key.ts';

// "When it may change", kept apart from what the detectors size: a candidate the guards hold is not
// proposed this tick. Each hold is a named rule (HoldRule), audited when it starts and shown on the
// target's open recommendation (consider-candidate.ts).

export type { Hold } from './control-types.ts';

/** Whether a guard holds the candidate back at `atNs` (null: it may be proposed). */
export function holdCandidate(
  settings: EngineSettings,
  s: ControlState,
  c: Candidate,
  targetKey: string,
  atNs: bigint,
): Hold | null {
  const memory = s.memory.get(memoryKey(c.kind, targetKey));
  // No reversal inside the cooldown; no pile-up on a target whose last action is still landing.
  if (memory && memory.direction !== c.direction && atNs - memory.appliedNs <= settings.cooldownNs)
    return { rule: 'no_reversal_in_cooldown', why: `the last ${memory.direction} is within the cooldown` };
  if (
    memory &&
    memory.direction === c.direction &&
    !c.urgent &&
    atNs - memory.appliedNs < BigInt(settings.fastWindowMs) * 1_000_000n
  )
    return {
      rule: 'last_action_landing',
      why: 'the last action the same way is younger than the short window',
    };
  // A human said no to this kind of change on this target: do not ask again until the TTL passes.
  const rejectedAt = s.rejected.get(decisionKey(c.kind, targetKey, c.direction));
  if (rejectedAt !== undefined && atNs - rejectedAt < settings.ttlNs)
    return { rule: 'rejected_recently', why: 'rejected by a human within the recommendation TTL' };
  return null;
}

/**
 * A pool whose replica count moved without Governor (an operator, another autoscaler, a fault)
 * was scaled all the same: its cooldown and hysteresis start from that change.
 */
export function noteExternalScaling(
  control: ControlConfig,
  s: ControlState,
  obs: FleetObservation,
  atNs: bigint,
): void {
  for (const p of obs.pools) {
    const asked = s.memory.get(memoryKey('scale', { pool: p.pool }));
    if (
      asked?.expectReplicas != null &&
      asked.direction === 'increase' &&
      asked.readyNs === undefined &&
      p.readyReplicas !== null &&
      p.readyReplicas >= asked.expectReplicas
    ) {
      asked.readyNs = atNs;
    }
    if (p.replicas === null) continue;
    const previous = s.observedReplicas[p.pool];
    s.observedReplicas[p.pool] = p.replicas;
    if (previous === undefined || previous === p.replicas) continue;
    const direction = p.replicas > previous ? 'increase' : 'decrease';
    const key = memoryKey('scale', { pool: p.pool });
    const memory = s.memory.get(key);
    const recent = memory !== undefined && atNs - memory.appliedNs <= secondsToNs(control.settle_timeout_s);
    // Replicas are a time average over the short window: while Governor's own scale action lands
    // (replicas starting, or draining their requests one by one) the count moves unevenly, even
    // back a step. Any count between where the action started and where it goes is its doing.
    const onItsWay =
      recent &&
      memory.recommendationId !== 'external' &&
      memory.expectReplicas !== null &&
      memory.fromReplicas !== undefined &&
      p.replicas >= Math.min(memory.fromReplicas, memory.expectReplicas) &&
      p.replicas <= Math.max(memory.fromReplicas, memory.expectReplicas);
    const explained = (recent && memory.direction === direction) || onItsWay;
    // A replica crashing or being replaced while Governor's scale-up still starts does not make
    // the pool settled: the scale-up keeps waiting for the replicas it asked for.
    const scalingUp =
      recent &&
      memory.recommendationId !== 'external' &&
      memory.direction === 'increase' &&
      memory.readyNs === undefined;
    if (explained || scalingUp) continue;
    s.memory.set(key, { direction, appliedNs: atNs, recommendationId: 'external', expectReplicas: null });
  }
}
