import type { PolicyConfig, RecommendationState } from '@governor/conventions';
import type { FleetObservation } from '../observe-fleet.ts';
import { formatTargetKey } from '../target-key.ts';
import { secondsToNs } from '../time.ts';
import { describePrevious } from './apply-to-actuated.ts';
import { applyRecord, createRecord, observedShares } from './apply-record.ts';
import type { Candidate, ControlState, Hold, RecommendationRecord } from './control-types.ts';
import type { EngineSettings } from './engine-settings.ts';
import { gateCandidate } from './gate-candidate.ts';
import { holdCandidate } from './guards.ts';
import { kindActionOf, setAction } from './kind-action.ts';
import { stableJson } from './to-api.ts';
import { type TickOutput, recordAudit, touchRecord } from './tick-output.ts';
import { type DecisionKey, decisionKey, memoryKey } from './memory-key.ts';

export const OPEN_STATES: readonly RecommendationState[] = ['proposed', 'approved'];

/**
 * A detector's candidate, past the guards: kept as the target's one open recommendation (new, or
 * the open one refreshed), then through the policy gate — auto-applied, dry-run or left proposed.
 */
export function considerCandidate(
  settings: EngineSettings,
  s: ControlState,
  out: TickOutput,
  obs: FleetObservation | null,
  policies: readonly PolicyConfig[],
  c: Candidate,
  atNs: bigint,
): void {
  const targetKey = formatTargetKey(c.target);
  const now = settings.now;
  const existing = [...s.open.values()].find(
    (r) => r.kind === c.kind && r.targetKey === targetKey && OPEN_STATES.includes(r.state),
  );
  const holdKey = decisionKey(c.kind, targetKey, c.direction);
  const hold = holdCandidate(settings, s, c, targetKey, atNs);
  if (hold) {
    noteHold(s, out, now, c, hold, holdKey, existing?.direction === c.direction ? existing : null, atNs);
    return;
  }
  s.holds.delete(holdKey);
  const memory = s.memory.get(memoryKey(c.kind, targetKey));
  if (existing?.state === 'approved') return;
  let rec: RecommendationRecord;
  let created = false;
  if (existing && existing.direction === c.direction) {
    // One open recommendation per target and direction, kept current as the evidence moves.
    rec = existing;
    const actionChanged = stableJson(rec.action) !== stableJson(c.action);
    setAction(rec, c);
    rec.reason = c.reason;
    rec.evidence = c.evidence;
    rec.expectedImpact = c.expectedImpact;
    rec.confidence = c.confidence;
    rec.waits = c.waits ?? null;
    rec.scopePools = c.scopePools;
    rec.updatedNs = atNs;
    const holdEnded = rec.hold !== null;
    rec.hold = null;
    if (actionChanged) {
      touchRecord(out, rec);
      recordAudit(
        out,
        now,
        atNs,
        { decision: 'refreshed', details: { action: rec.action } },
        'engine',
        rec,
        rec.reason,
        'proposed',
      );
    } else if (holdEnded) {
      touchRecord(out, rec);
    } else {
      out.touched.set(rec.id, rec);
    }
  } else {
    rec = createRecord(c, atNs);
    created = true;
    if (existing) {
      existing.state = 'expired';
      existing.updatedNs = atNs;
      existing.gate = `superseded by ${rec.id}`;
      s.open.delete(existing.id);
      touchRecord(out, existing);
      recordAudit(
        out,
        now,
        atNs,
        { decision: 'superseded', details: {} },
        'engine',
        existing,
        `the opposite action is now recommended (${rec.id})`,
        'expired',
      );
    }
    s.open.set(rec.id, rec);
  }

  const previous = describePrevious(s.actuated, c, c.target, observedShares(obs, c.target.model));
  const gate = gateCandidate({
    step: kindActionOf(c),
    target: c.target,
    previous,
    confidence: c.confidence,
    waits: c.waits ?? null,
    atNs,
    policies,
    control: settings.control,
    memory,
    autoApplied: s.autoApplied,
  });
  const gateChanged = rec.gate !== gate.note;
  rec.policy = gate.policy;
  rec.gate = gate.note;
  if (gate.decision === 'auto_apply') {
    setAction(rec, gate.step);
    if (created)
      recordAudit(
        out,
        now,
        atNs,
        { decision: 'proposed', details: { confidence: rec.confidence } },
        'engine',
        rec,
        rec.reason,
        'proposed',
      );
    applyRecord(settings, s, out, obs, rec, atNs, `policy:${gate.policy}`, 'auto_applied', gate.note);
    const list = s.autoApplied.get(gate.policy) ?? [];
    list.push(atNs);
    s.autoApplied.set(
      gate.policy,
      list.filter((t) => atNs - t < secondsToNs(3600)),
    );
    return;
  }
  if (created) {
    touchRecord(out, rec, true);
    recordAudit(
      out,
      now,
      atNs,
      { decision: 'proposed', details: { confidence: rec.confidence, gate: gate.note } },
      'engine',
      rec,
      rec.reason,
      'proposed',
    );
  }
  if (gate.decision === 'dry_run' && (created || gateChanged)) {
    recordAudit(
      out,
      now,
      atNs,
      { decision: 'dry_run', details: { action: gate.step.action } },
      `policy:${gate.policy}`,
      rec,
      gate.note,
      'not applied (dry run)',
    );
  }
}

/**
 * A guard holds the candidate back: audited when the hold starts or its rule changes (not at every
 * tick it lasts), and shown on the target's open recommendation of the same direction, if any.
 */
function noteHold(
  s: ControlState,
  out: TickOutput,
  now: () => number,
  c: Candidate,
  hold: Hold,
  holdKey: DecisionKey,
  open: RecommendationRecord | null,
  atNs: bigint,
): void {
  if (open && (open.hold?.rule !== hold.rule || open.hold.why !== hold.why)) {
    open.hold = hold;
    touchRecord(out, open);
  }
  if (s.holds.get(holdKey) === hold.rule) return;
  s.holds.set(holdKey, hold.rule);
  const subject = open ?? { id: null, kind: c.kind, target: c.target, actionId: null };
  recordAudit(
    out,
    now,
    atNs,
    { decision: 'held', details: { action: c.action, direction: c.direction, confidence: c.confidence } },
    `guard:${hold.rule}`,
    subject,
    hold.why,
    open ? 'kept waiting' : 'not proposed',
  );
}
