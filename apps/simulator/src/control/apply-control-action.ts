import { RECOMMENDATION_KINDS } from '@governor/conventions';
import type { ControlAction, RecommendationKind } from '@governor/conventions';
import type { Simulation } from '../sim/simulation.ts';

export type ApplyStatus = 'applied' | 'duplicate' | 'rejected';

export interface ApplyResult {
  id: string;
  status: ApplyStatus;
  message?: string;
}

/**
 * A ControlAction as received (over HTTP, or from a lockstep evaluate response): the kind is known,
 * the action's fields are checked where it is applied (applyKind), one by one.
 */
export type ReceivedAction = Omit<ControlAction, 'kind' | 'action'> & {
  kind: RecommendationKind;
  action: object;
};

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks the shape of a ControlAction received over HTTP; returns a message naming what is wrong. */
export function parseControlAction(
  body: unknown,
): { ok: true; action: ReceivedAction } | { ok: false; message: string } {
  if (!isRecord(body)) return { ok: false, message: 'body must be a ControlAction JSON object' };
  if (typeof body.id !== 'string' || body.id === '')
    return { ok: false, message: '"id" must be a non-empty string' };
  if (typeof body.kind !== 'string' || !(RECOMMENDATION_KINDS as readonly string[]).includes(body.kind)) {
    return { ok: false, message: `"kind" must be one of ${RECOMMENDATION_KINDS.join(', ')}` };
  }
  if (body.target !== undefined && !isRecord(body.target))
    return { ok: false, message: '"target" must be an object' };
  if (!isRecord(body.action)) return { ok: false, message: '"action" must be an object' };
  if (body.type !== undefined && body.type !== 'apply' && body.type !== 'rollback') {
    return { ok: false, message: '"type" must be "apply" or "rollback"' };
  }
  return {
    ok: true,
    action: {
      id: body.id,
      recommendationId: typeof body.recommendationId === 'string' ? body.recommendationId : '',
      type: body.type === 'rollback' ? 'rollback' : 'apply',
      kind: body.kind as RecommendationKind,
      target: (body.target as ControlAction['target']) ?? {},
      action: body.action,
      at: typeof body.at === 'string' ? body.at : '',
    },
  };
}

export interface ActionApplier {
  /** Applies an action at the simulation's current time; a repeated id is acknowledged, not re-applied. */
  apply(action: ReceivedAction, source: string): ApplyResult;
  readonly appliedIds: ReadonlySet<string>;
}

export function createActionApplier(sim: Simulation): ActionApplier {
  const appliedIds = new Set<string>();
  const reject = (id: string, message: string): ApplyResult => ({ id, status: 'rejected', message });

  const applyKind = (a: ReceivedAction, source: string): string | null => {
    const body = a.action as Record<string, unknown>;
    const poolName = a.target.pool;
    switch (a.kind) {
      case 'scale': {
        if (!poolName || !sim.getPool(poolName))
          return `scale needs target.pool naming a pool (${sim.pools.map((p) => p.spec.name).join(', ')})`;
        if (typeof body.to !== 'number' || !Number.isFinite(body.to) || body.to < 0)
          return 'scale needs action.to >= 0';
        sim.countAction(source, 'scale', `${poolName} →${body.to}`);
        sim.scalePool(poolName, body.to, source);
        return null;
      }
      case 'shift_traffic': {
        if (!isRecord(body.weights)) return 'shift_traffic needs action.weights {pool: weight}';
        const entries = Object.entries(body.weights);
        for (const [name, weight] of entries) {
          if (!sim.getPool(name)) return `shift_traffic: unknown pool "${name}"`;
          if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0)
            return `shift_traffic: weight of "${name}" must be >= 0`;
        }
        for (const [name, weight] of entries) sim.getPool(name)!.weight = weight as number;
        sim.countAction(source, a.kind, entries.map(([n, w]) => `${n}=${w}`).join(','));
        return null;
      }
      case 'circuit_break': {
        if (!poolName || !sim.getPool(poolName)) return 'circuit_break needs target.pool naming a pool';
        if (typeof body.open !== 'boolean') return 'circuit_break needs action.open (boolean)';
        const durationS = typeof body.durationS === 'number' ? body.durationS : undefined;
        sim.setBreaker(poolName, body.open, durationS);
        sim.countAction(source, a.kind, `${poolName} open=${body.open}`);
        return null;
      }
      case 'shed_load': {
        if (body.minPriority !== null && typeof body.minPriority !== 'number')
          return 'shed_load needs action.minPriority (number or null)';
        const scope = a.target.model ?? (poolName ? sim.getPool(poolName)?.spec.model : undefined) ?? '*';
        if (body.minPriority === null) sim.minPriorityByModel.delete(scope);
        else sim.minPriorityByModel.set(scope, body.minPriority);
        sim.countAction(source, a.kind, `${scope} minPriority=${body.minPriority}`);
        return null;
      }
      case 'retry_budget': {
        if (
          body.maxRetryRatio !== null &&
          (typeof body.maxRetryRatio !== 'number' || body.maxRetryRatio < 0)
        ) {
          return 'retry_budget needs action.maxRetryRatio (number >= 0 or null)';
        }
        sim.retryBudgetRatio = body.maxRetryRatio;
        sim.countAction(source, a.kind, `maxRetryRatio=${body.maxRetryRatio}`);
        return null;
      }
      case 'downgrade_model': {
        const { fromModel, toModel, fraction } = body;
        if (typeof fromModel !== 'string' || typeof toModel !== 'string')
          return 'downgrade_model needs action.fromModel and action.toModel';
        if (typeof fraction !== 'number' || fraction < 0 || fraction > 1)
          return 'downgrade_model needs action.fraction in [0, 1]';
        if (!sim.pools.some((p) => p.spec.model === toModel))
          return `downgrade_model: no pool serves "${toModel}"`;
        if (fraction === 0) sim.downgrades.delete(fromModel);
        else sim.downgrades.set(fromModel, { toModel, fraction });
        sim.countAction(source, a.kind, `${fromModel}→${toModel} ${fraction}`);
        return null;
      }
    }
  };

  return {
    appliedIds,
    apply(action, source) {
      if (appliedIds.has(action.id))
        return { id: action.id, status: 'duplicate', message: 'already applied; not applied again' };
      const error = applyKind(action, source);
      if (error) return reject(action.id, error);
      appliedIds.add(action.id);
      return { id: action.id, status: 'applied' };
    },
  };
}
