import type { ControlAction, PolicyConfig } from '@governor/conventions';
import { randomUUID } from 'node:crypto';
import type { DeliveryOutcome } from '../actuators/create-delivery-queue.ts';
import type { ControlRepository } from '../state/control-repository.ts';
import { applyToActuated } from './apply-to-actuated.ts';
import { rememberAction } from './apply-record.ts';
import type { AuditEntry } from './audit-entry.ts';
import type { ControlState } from './control-types.ts';
import { previousOf } from './kind-action.ts';
import type { ControlEvent, TickOutput } from './tick-output.ts';

// What the engine keeps in its repository: recommendations, the audit log and API-set policies.
// After a restart the engine's state is rebuilt from them.

/** Where the policies in force came from. */
export interface PoliciesView {
  policies: PolicyConfig[];
  source: 'config' | 'api';
  updatedBy: string | null;
  updatedAt: string | null;
}

/**
 * Rebuilds the engine's state from the repository: what its applied actions set and remember, the
 * open recommendations, the last tick. Returns the policies in force (API-set ones survive a restart
 * while the config's policies are unchanged, `configHash`).
 */
export async function restoreState(
  repository: ControlRepository,
  state: ControlState,
  configPolicies: PolicyConfig[],
  configHash: string,
  maxTickNs: bigint,
): Promise<PoliciesView> {
  let view: PoliciesView = { policies: configPolicies, source: 'config', updatedBy: null, updatedAt: null };
  const stored = await repository.loadPolicies();
  if (stored && stored.configHash === configHash) {
    view = {
      policies: stored.policies,
      source: 'api',
      updatedBy: stored.updatedBy,
      updatedAt: new Date(stored.updatedAtMs).toISOString(),
    };
  }
  for (const rec of await repository.loadActive()) {
    if (rec.appliedNs !== null) {
      applyToActuated(state.actuated, rec, rec.target, rec.appliedNs, undefined, rec.cause);
      rememberAction(state, rec, rec.direction, rec.appliedNs);
      const previous = previousOf(rec);
      if (rec.state === 'rolled_back' && previous && rec.verifiedNs !== null) {
        applyToActuated(state.actuated, previous, rec.target, rec.verifiedNs, undefined, rec.cause);
        rememberAction(state, rec, rec.direction === 'increase' ? 'decrease' : 'increase', rec.verifiedNs);
      }
      if (rec.policy && (rec.gate ?? '').startsWith('auto-applied')) {
        const list = state.autoApplied.get(rec.policy) ?? [];
        list.push(rec.appliedNs);
        state.autoApplied.set(rec.policy, list);
      }
    }
    if (rec.state === 'proposed' || rec.state === 'approved' || rec.state === 'applied')
      state.open.set(rec.id, rec);
    if (state.lastTickNs === null || rec.updatedNs > state.lastTickNs) state.lastTickNs = rec.updatedNs;
  }
  // A tick past the event-time bound (a store poisoned before the bound existed) would refuse
  // every real tick after it as time reversed: start over from the watermark instead.
  if (state.lastTickNs !== null && state.lastTickNs > maxTickNs) state.lastTickNs = null;
  return view;
}

/** Saves what a tick or a human decision changed, then publishes its events. */
export async function persistOutput(
  repository: ControlRepository,
  out: TickOutput,
  emit: (event: ControlEvent) => void,
): Promise<void> {
  await repository.saveRecommendations([...out.touched.values()]);
  await repository.appendAudit(out.audit);
  for (const e of out.events) emit(e);
}

/** Audits a delivery's outcome (at the last tick's event time) and publishes it. */
export async function recordDelivery(
  repository: ControlRepository,
  atNs: bigint,
  now: () => number,
  emit: (event: ControlEvent) => void,
  reportError: (error: unknown) => void,
  outcome: DeliveryOutcome,
  action: ControlAction,
): Promise<void> {
  const entry: AuditEntry = {
    id: randomUUID(),
    atNs,
    recordedAtMs: now(),
    recommendationId: action.recommendationId,
    actionId: action.id,
    kind: action.kind,
    target: action.target,
    decision: outcome.status === 'delivered' ? 'delivered' : 'delivery_failed',
    actor: `actuator:${outcome.actuator}`,
    reason:
      outcome.status === 'delivered'
        ? `${action.type} delivered to ${outcome.actuator}`
        : `${action.type} not delivered to ${outcome.actuator}: ${outcome.error}`,
    result: outcome.status === 'delivered' ? `delivered (HTTP ${outcome.httpStatus ?? 'n/a'})` : 'failed',
    details: { attempts: outcome.attempts, httpStatus: outcome.httpStatus, error: outcome.error },
  };
  try {
    await repository.appendAudit([entry]);
  } catch (error) {
    reportError(error);
  }
  emit({ type: 'control.delivery', data: outcome });
}
