import { detectCacheAffinity } from '../detectors/detect-cache-affinity.ts';
import { detectCostEfficiency } from '../detectors/detect-cost-efficiency.ts';
import type { DetectContext } from '../detectors/detect-context.ts';
import { detectDowngradeModel } from '../detectors/detect-downgrade-model.ts';
import { detectMemoryBound } from '../detectors/detect-memory-bound.ts';
import { detectPoolOutliers } from '../detectors/detect-pool-outliers.ts';
import { detectRetryBudget } from '../detectors/detect-retry-budget.ts';
import { detectScale } from '../detectors/detect-scale.ts';
import { detectShedLoad } from '../detectors/detect-shed-load.ts';
import { detectTrafficRecovery } from '../detectors/detect-traffic-recovery.ts';
import type { Candidate } from './control-types.ts';

/**
 * Attribution order (packages/control/README.md): first what is broken (a pool against its peers), then retries
 * amplifying failures, then where capacity is wrong (memory- or cache-bound before "more of the
 * same"), then where traffic costs more than it needs to, then plain capacity, then admission (downgrade before shedding, since a downgraded task can
 * still succeed). Every detector sees the tick's suspects (findSuspects, computed before any runs);
 * the scale policy leaves alone the pools a memory-bound or cache-affinity shift moves traffic off.
 */
export function runDetectors(ctx: DetectContext): Candidate[] {
  const candidates: Candidate[] = [...detectPoolOutliers(ctx)];
  const shifted = () =>
    new Set(candidates.filter((c) => c.kind === 'shift_traffic').map((c) => c.target.model ?? ''));
  candidates.push(...detectTrafficRecovery(ctx).filter((c) => !shifted().has(c.target.model ?? '')));
  candidates.push(...detectRetryBudget(ctx));
  const forResource = [...detectMemoryBound(ctx, shifted()), ...detectCacheAffinity(ctx, shifted())];
  candidates.push(...forResource);
  candidates.push(...detectCostEfficiency(ctx, shifted()));
  candidates.push(
    ...detectScale(ctx, new Set(forResource.map((c) => c.target.pool ?? '')), plannedWeights(candidates)),
  );
  const downgrades = detectDowngradeModel(ctx);
  candidates.push(...downgrades);
  const downgrading = new Set(
    downgrades.filter((d) => d.direction === 'increase').map((d) => d.target.model ?? ''),
  );
  candidates.push(...detectShedLoad(ctx, downgrading));
  return candidates;
}

/** The routing weights this tick's shifts ask for, by model (the last shift of a model wins). */
function plannedWeights(candidates: readonly Candidate[]): Map<string, Record<string, number>> {
  const out = new Map<string, Record<string, number>>();
  for (const c of candidates)
    if (c.kind === 'shift_traffic' && c.target.model) out.set(c.target.model, c.action.weights);
  return out;
}
