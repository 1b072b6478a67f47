import { boundShare, retryStormRatio } from '../engine/control-tuning.ts';
import type { Candidate } from '../engine/control-types.ts';
import { type DetectContext, evidence, groupByModel } from './detect-context.ts';
import { isFailing, round } from './pool-signals.ts';
import { allOf, anyOf, confidenceOf, ratioZ, shareZ } from '../objective/confidence.ts';
import { errorBudget } from '../objective/operating-bounds.ts';
import { confidenceOfRoom, readModelPressure } from './read-model-pressure.ts';
import { carriesMore } from '../objective/carries-more.ts';
import type { PoolView } from '../observe-fleet.ts';
import { readPoolModel } from './read-pool-model.ts';

// Workflow-aware admission: when a model's pools are queue-bound past the SLO and more capacity is not
// here yet (replicas still cold, or every pool at max_replicas), turn away NEW tasks of the lowest
// priority still admitted. In-flight workflow steps are always admitted — they already spent money,
// and failing them wastes it. Lifted one level at a time once the pools are comfortable again.

/** Retries per request over the fleet's demand in the short window (gateway rejections included). */
function readFleetRetryRatio(ctx: DetectContext): number {
  let sum = 0;
  let weight = 0;
  for (const d of ctx.obs.priorities) {
    if (d.retryRatio === null) continue;
    sum += d.retryRatio * d.requests;
    weight += d.requests;
  }
  return weight > 0 ? sum / weight : 0;
}

export function detectShedLoad(ctx: DetectContext, skipModels: ReadonlySet<string>): Candidate[] {
  const out: Candidate[] = [];
  const { fastWindowLabel, tuning, slo, control } = ctx;
  const retryStorm = readFleetRetryRatio(ctx) >= retryStormRatio(tuning);
  for (const [model, pools] of groupByModel(ctx.obs.pools)) {
    const key = `model=${model}`;
    const current = ctx.state.actuated.shed[key] ?? null;
    const demand = ctx.obs.priorities.filter((p) => p.model === model && p.requests > 0);
    const levels = [...new Set(demand.map((p) => p.priority))].sort((a, b) => a - b);
    const pressure = readModelPressure(ctx, model, pools);
    const rateOf = (minPriority: number | null) =>
      demand
        .filter((d) => minPriority === null || d.priority >= minPriority)
        .reduce((s, d) => s + d.fastRatePerS, 0);
    const totalRate = rateOf(null);
    const admittedRate = rateOf(current);
    const ev = [
      evidence(`ttftMs.p95{model=${model}}`, pressure.ttftP95Ms, slo.ttft_ms ?? null, fastWindowLabel),
      evidence(`queueShareOfTtft{model=${model}}`, pressure.queueShare, boundShare(tuning), fastWindowLabel),
      evidence(
        `utilization{model=${model}}`,
        pressure.utilization,
        control.target_utilization,
        fastWindowLabel,
      ),
      evidence(`requestsPerS{model=${model}}`, totalRate, null, fastWindowLabel),
    ];

    // Shedding turns tasks away, so it waits until overload turns into failures (timeouts, errors) on
    // the pools: a task that only misses the SLO still succeeds, a shed one never does.
    const failing = isFailing(pressure.poolErrorRate, pressure.requests, tuning, errorBudget(ctx.control));
    // While retries are a large part of the load, capping them (retry_budget) comes first: a refused
    // retry costs one attempt of a task that is failing anyway, a shed task is a whole task lost.
    if (
      pressure.overloaded &&
      failing &&
      !retryStorm &&
      !skipModels.has(model) &&
      (pressure.capacityPending || pressure.atCeiling)
    ) {
      const admitted = levels.filter((l) => current === null || l >= current);
      // Never shed the most important class, and only classes that actually send traffic.
      if (admitted.length < 2) continue;
      const next = admitted[1]!;
      const shedRate = admittedRate - rateOf(next);
      const shedShare = admittedRate > 0 ? shedRate / admittedRate : 0;
      if (shedShare <= 0) continue;
      out.push({
        kind: 'shed_load',
        target: { model },
        action: { minPriority: next },
        direction: 'increase',
        reason: `${model} is queue-bound past its SLO (TTFT p95 ${Math.round(pressure.ttftP95Ms ?? 0)} ms, ${Math.round((pressure.poolErrorRate ?? 0) * 100)}% of requests failing) and ${pressure.atCeiling ? 'every pool is at max_replicas' : 'new replicas are still starting'}; turn away new tasks below priority ${next} (${Math.round(shedShare * 100)}% of arrivals) while in-flight workflow steps keep running.`,
        evidence: [
          ...ev,
          evidence(`shedShare{model=${model},priority<${next}}`, shedShare, null, fastWindowLabel),
        ],
        expectedImpact: {
          summary: `Load on ${model} drops by about ${Math.round(shedShare * 100)}%; admitted and in-flight tasks get back under the SLO.`,
          requestsPerS: { from: round(admittedRate, 2), to: round(admittedRate - shedRate, 2) },
          ttftP95Ms: {
            from: pressure.ttftP95Ms === null ? null : Math.round(pressure.ttftP95Ms),
            to: slo.ttft_ms ?? null,
          },
        },
        // It rests on the model failing past its error budget and being overloaded (queue-bound past
        // the SLO): no surer than the less sure of the two.
        confidence: confidenceOf(
          allOf(
            shareZ(pressure.poolErrorRate ?? 0, errorBudget(ctx.control), pressure.requests, 'above'),
            anyOf(
              pressure.queueShare !== null
                ? ratioZ(pressure.queueShare, boundShare(tuning), pressure.requests, 'above')
                : Number.NaN,
              slo.ttft_ms !== undefined && pressure.ttftP95Ms !== null
                ? ratioZ(pressure.ttftP95Ms, slo.ttft_ms, pressure.requests, 'above')
                : Number.NaN,
            ),
          ),
          pressure.requests,
        ),
        scopePools: pressure.pools.map((p) => p.pool),
      });
      continue;
    }

    if (current !== null && !pressure.capacityPending && !failing) {
      const lower = levels.filter((l) => l < current);
      const next = lower.length > 0 ? lower[lower.length - 1]! : null;
      const readmitRate = rateOf(next) - admittedRate;
      const projected =
        pressure.utilization === null || admittedRate <= 0
          ? null
          : (pressure.utilization * (admittedRate + Math.max(0, readmitRate))) / admittedRate;
      // Readmit the next class down once the pools carry it within the objective: by their models
      // (each pool's recent requests replayed at the admitted load plus the readmitted share), or,
      // where a pool cannot be modelled, comfortably inside the SLO and under the target utilization.
      const byModel = poolsCarry(ctx, pressure.pools, admittedRate, readmitRate);
      const readmit =
        byModel ?? (pressure.relaxed && (projected === null || projected <= control.target_utilization));
      if (!readmit) continue;
      const lifted = next === null || next <= (levels[0] ?? 0) ? null : next;
      out.push({
        kind: 'shed_load',
        target: { model },
        action: { minPriority: lifted },
        direction: 'decrease',
        reason:
          lifted === null
            ? `${model} is back within its SLO with room to spare; stop shedding and admit every priority again.`
            : `${model} is back within its SLO with room to spare; admit priority ${lifted} again.`,
        evidence: [
          ...ev,
          evidence(
            `projectedUtilization{model=${model}}`,
            projected,
            control.target_utilization,
            fastWindowLabel,
          ),
        ],
        expectedImpact: {
          summary: `Tasks that were turned away are served again while TTFT stays under the SLO.`,
          utilization: {
            from: pressure.utilization === null ? null : round(pressure.utilization, 2),
            to: projected === null ? null : round(projected, 2),
          },
        },
        confidence: confidenceOfRoom(pressure, projected, control.target_utilization, slo.ttft_ms),
        scopePools: pressure.pools.map((p) => p.pool),
      });
    }
  }
  return out;
}

/**
 * Whether every pool serving the model carries `readmitRatePerS` more, spread over them as the load
 * they carry now (objective/carries-more.ts); null when one cannot be modelled.
 */
function poolsCarry(
  ctx: DetectContext,
  pools: readonly PoolView[],
  admittedRatePerS: number,
  readmitRatePerS: number,
): boolean | null {
  if (!(admittedRatePerS > 0) || pools.length === 0) return null;
  const loadFactor = 1 + Math.max(0, readmitRatePerS) / admittedRatePerS;
  for (const p of pools) {
    // A pool that carries none of the model's traffic now is given none of what comes back.
    if (!(p.mainRatePerS > 0)) continue;
    const model = readPoolModel(ctx, p);
    if (!model) return null;
    const replicas = model.observation.replicas;
    if (!carriesMore(model, replicas, loadFactor, ctx.control.slo_attainment_target).carries) return false;
  }
  return true;
}
