import type { PoolView } from '../observe-fleet.ts';
import { type DetectContext, readMemory } from './detect-context.ts';

// Whether a pool's last scale action has landed: the scale detector and verification wait for it.

export interface ScaleReadiness {
  settled: boolean;
  why: string;
}

/** Whether the pool's last scale action has taken effect (new replicas serving, or time passed). */
export function readScaleReadiness(ctx: DetectContext, pool: PoolView): ScaleReadiness {
  const memory = readMemory(ctx, 'scale', { pool: pool.pool });
  if (!memory) return { settled: true, why: 'no earlier scale action' };
  const elapsedS = Number(ctx.obs.atNs - memory.appliedNs) / 1e9;
  const freshWindowS = ctx.obs.fastWindowMs / 1000;
  if (elapsedS < freshWindowS)
    return { settled: false, why: `scaled ${Math.round(elapsedS)} s ago; signals not yet fresh` };
  if (memory.direction === 'increase' && memory.expectReplicas !== null) {
    if (pool.readyReplicas !== null && pool.readyReplicas >= memory.expectReplicas) {
      // The new replicas are serving, but first they drain the backlog that built while they
      // started: judge the pool again after one short window for that and one that shows them
      // carrying the steady load.
      const readyForS = memory.readyNs === undefined ? 0 : Number(ctx.obs.atNs - memory.readyNs) / 1e9;
      if (readyForS < 2 * freshWindowS && elapsedS < ctx.control.settle_timeout_s) {
        return {
          settled: false,
          why: `${pool.readyReplicas} of ${memory.expectReplicas} replicas ready for ${Math.round(readyForS)} s; signals not yet fresh`,
        };
      }
      return { settled: true, why: `${pool.readyReplicas} of ${memory.expectReplicas} replicas ready` };
    }
    const limitS = pool.readyReplicas === null ? ctx.control.cooldown_s : ctx.control.settle_timeout_s;
    if (elapsedS < limitS) {
      return {
        settled: false,
        why:
          pool.readyReplicas === null
            ? `scale-up ${Math.round(elapsedS)} s ago; waiting ${limitS} s for cold starts`
            : `${pool.readyReplicas} of ${memory.expectReplicas} replicas ready ${Math.round(elapsedS)} s after the scale-up`,
      };
    }
  }
  return { settled: true, why: `last scale ${Math.round(elapsedS)} s ago` };
}

/** The count Governor's last scale-in asked for, while the pool still pays for more (draining). */
export function drainingTo(ctx: DetectContext, pool: PoolView): number | null {
  const memory = readMemory(ctx, 'scale', { pool: pool.pool });
  if (memory?.direction !== 'decrease' || memory.expectReplicas === null || pool.replicas === null)
    return null;
  const elapsedS = Number(ctx.obs.atNs - memory.appliedNs) / 1e9;
  return pool.replicas > memory.expectReplicas && elapsedS < ctx.control.settle_timeout_s
    ? memory.expectReplicas
    : null;
}
