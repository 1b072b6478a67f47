import { boundShare } from '../engine/control-tuning.ts';
import type { Candidate } from '../engine/control-types.ts';
import type { PoolView } from '../observe-fleet.ts';
import { type DetectContext, TRAFFIC_STEP, evidence, groupByModel } from './detect-context.ts';
import { round, MIN_P95_SAMPLE } from './pool-signals.ts';
import { confidenceOf, ratioZ, shareZ } from '../objective/confidence.ts';
import { type ModelPressure, confidenceOfRoom, readModelPressure } from './read-model-pressure.ts';
import { scaleUpUtilization } from '../objective/operating-bounds.ts';

// When a model's pools cannot serve its demand within the SLO and no capacity arrives soon (cold
// starts, max_replicas) — or the model has no working pool at all — move a share of NEW tasks to a
// cheaper model whose pools have room. A task served by the smaller model succeeds; a task stuck in
// the big model's queue fails the SLO and still costs GPU time. Given back step by step.

const MAX_STEP = 0.5;
/** Most of a model's requests failing: it has no working pool. */
const UNAVAILABLE_FAILING = 0.5;

export function detectDowngradeModel(ctx: DetectContext): Candidate[] {
  const out: Candidate[] = [];
  const byModel = groupByModel(ctx.obs.pools);
  const pressures = new Map<string, ModelPressure>();
  for (const model of byModel.keys()) pressures.set(model, readModelPressure(ctx, model, ctx.obs.pools));
  const { tuning, control, fastWindowLabel, slo } = ctx;

  for (const [model, pools] of byModel) {
    const pressure = pressures.get(model)!;
    const demand = ctx.obs.priorities.filter((d) => d.model === model);
    const demandRequests = demand.reduce((s, d) => s + d.requests, 0);
    const demandRate = demand.reduce((s, d) => s + d.fastRatePerS, 0);
    const failing =
      demandRequests > 0
        ? demand.reduce((s, d) => s + (d.errorRate ?? 0) * d.requests, 0) / demandRequests
        : 0;
    // No working pool: most requests that reach the pools fail, or none reach them at all — unless
    // Governor itself is turning them away at the gateway.
    const shedding = ctx.state.actuated.shed[`model=${model}`] !== undefined;
    const poolFailing = pressure.requests > 0 ? (pressure.poolErrorRate ?? 0) : failing;
    const unavailable = !shedding && demandRequests >= MIN_P95_SAMPLE && poolFailing >= UNAVAILABLE_FAILING;
    const current = ctx.state.actuated.downgrade[model] ?? null;
    const currentFraction = current?.fraction ?? 0;

    const struggling =
      unavailable || (pressure.overloaded && (pressure.capacityPending || pressure.atCeiling));
    if (struggling && currentFraction < 1) {
      const to = pickSmallerModel(ctx, model, pools, byModel, pressures);
      if (!to || (current && current.toModel !== to.model)) continue;
      const wanted = unavailable
        ? 1
        : Math.min(
            1,
            currentFraction +
              clamp(
                pressure.utilization ? 1 - control.target_utilization / pressure.utilization : TRAFFIC_STEP,
                0.1,
                MAX_STEP,
              ),
          );
      // The smaller model's pools must absorb the moved share without reaching the utilization that
      // scales them up.
      const room =
        to.rate > 0 && to.utilization > 0
          ? ((scaleUpUtilization(control) / to.utilization - 1) * to.rate) / Math.max(demandRate, 1e-9)
          : 1;
      const fraction = round(Math.min(wanted, currentFraction + Math.max(0, room)), 2);
      if (fraction - currentFraction < 0.05) continue;
      out.push({
        kind: 'downgrade_model',
        target: { model },
        action: { fromModel: model, toModel: to.model, fraction },
        direction: 'increase',
        reason: unavailable
          ? `${model} has no working pool (${Math.round(poolFailing * 100)}% of its requests fail); serve ${Math.round(fraction * 100)}% of its new tasks with ${to.model}, which has room.`
          : `${model} is queue-bound past its SLO (TTFT p95 ${Math.round(pressure.ttftP95Ms ?? 0)} ms) and ${pressure.atCeiling ? 'at max_replicas' : 'its new replicas are still starting'}; serve ${Math.round(fraction * 100)}% of its new tasks with ${to.model}, which runs at ${round(to.utilization, 2)} utilization.`,
        evidence: [
          evidence(`ttftMs.p95{model=${model}}`, pressure.ttftP95Ms, slo.ttft_ms ?? null, fastWindowLabel),
          evidence(`errorRate{model=${model}}`, poolFailing, UNAVAILABLE_FAILING, fastWindowLabel),
          evidence(
            `utilization{model=${model}}`,
            pressure.utilization,
            control.target_utilization,
            fastWindowLabel,
          ),
          evidence(
            `utilization{model=${to.model}}`,
            to.utilization,
            scaleUpUtilization(control),
            fastWindowLabel,
          ),
        ],
        expectedImpact: {
          summary: `${model}'s queue drains; moved tasks succeed on ${to.model} within the SLO at a lower cost per task.`,
          fraction: { from: currentFraction, to: fraction },
          ttftP95Ms: {
            from: pressure.ttftP95Ms === null ? null : Math.round(pressure.ttftP95Ms),
            to: slo.ttft_ms ?? null,
          },
        },
        // It rests on the model having no working pool (most requests failing), or on its queueing.
        confidence: confidenceOf(
          unavailable
            ? shareZ(poolFailing, UNAVAILABLE_FAILING, Math.max(pressure.requests, demandRequests), 'above')
            : ratioZ(pressure.queueShare ?? 0, boundShare(tuning), pressure.requests, 'above'),
          Math.max(pressure.requests, demandRequests),
        ),
        scopePools: [...pools.map((p) => p.pool), ...to.pools],
      });
      continue;
    }

    if (current && current.fraction > 0 && !unavailable && pressure.relaxed && !pressure.capacityPending) {
      const fraction = round(Math.max(0, current.fraction - TRAFFIC_STEP), 2);
      // Taking tasks back must keep this model's pools under the target utilization.
      const keptShare = 1 - current.fraction;
      const projected =
        pressure.utilization === null || keptShare <= 0
          ? null
          : (pressure.utilization * (1 - fraction)) / keptShare;
      if (projected !== null && projected > control.target_utilization) continue;
      out.push({
        kind: 'downgrade_model',
        target: { model },
        action: { fromModel: model, toModel: current.toModel, fraction },
        direction: 'decrease',
        reason: `${model} is within its SLO with room again; move ${fraction === 0 ? 'all' : `${Math.round((current.fraction - fraction) * 100)}% more of`} its tasks back from ${current.toModel}.`,
        evidence: [
          evidence(`ttftMs.p95{model=${model}}`, pressure.ttftP95Ms, slo.ttft_ms ?? null, fastWindowLabel),
          evidence(
            `projectedUtilization{model=${model}}`,
            projected,
            control.target_utilization,
            fastWindowLabel,
          ),
        ],
        expectedImpact: {
          summary: `Tasks get the model they asked for again while ${model} stays within the SLO.`,
          fraction: { from: current.fraction, to: fraction },
        },
        confidence: confidenceOfRoom(pressure, projected, control.target_utilization, slo.ttft_ms),
        scopePools: pools.map((p) => p.pool),
      });
    }
  }
  return out;
}

interface SmallerModel {
  model: string;
  pools: string[];
  utilization: number;
  rate: number;
}

/** The cheapest-per-replica other model with working pools below the target utilization. */
function pickSmallerModel(
  ctx: DetectContext,
  model: string,
  pools: PoolView[],
  byModel: Map<string, PoolView[]>,
  pressures: Map<string, ModelPressure>,
): SmallerModel | null {
  const replicaCost = (list: PoolView[]) => {
    const costs = list
      .map((p) => (p.gpuHourUsd === null ? null : p.gpuHourUsd * p.gpusPerReplica))
      .filter((c): c is number => c !== null);
    return costs.length > 0 ? Math.min(...costs) : null;
  };
  const ownCost = replicaCost(pools);
  let best: (SmallerModel & { cost: number }) | null = null;
  for (const [other, otherPools] of byModel) {
    if (other === model) continue;
    const cost = replicaCost(otherPools);
    if (ownCost === null || cost === null || cost >= ownCost) continue;
    const p = pressures.get(other);
    if (!p || p.overloaded || p.utilization === null || p.utilization > ctx.control.target_utilization)
      continue;
    const rate = otherPools.reduce((s, q) => s + Math.max(q.fastRatePerS, q.mainRatePerS), 0);
    if (!best || cost < best.cost) {
      best = { model: other, pools: otherPools.map((q) => q.pool), utilization: p.utilization, rate, cost };
    }
  }
  return best
    ? { model: best.model, pools: best.pools, utilization: best.utilization, rate: best.rate }
    : null;
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(hi, v));
}
