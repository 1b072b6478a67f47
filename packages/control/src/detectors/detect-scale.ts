import type { Candidate } from '../engine/control-types.ts';
import type { PoolView } from '../observe-fleet.ts';
import { type DetectContext, evidence, isCircuitOpen, readMemory } from './detect-context.ts';
import { estimateUtilization, readLoad, readQueueShare, round, scoreConfidence } from './pool-signals.ts';

// Queue-bound TTFT → more replicas; spare capacity that N−1 replicas can carry within the SLO →
// fewer. The objective is cost per successful task under the SLO: a replica that holds no SLO up
// is pure cost, a queue that breaks the SLO turns paid work into failed tasks.

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

export function detectScale(ctx: DetectContext): Candidate[] {
  const out: Candidate[] = [];
  for (const pool of ctx.obs.pools) {
    const candidate = judgePool(ctx, pool);
    if (candidate) out.push(candidate);
  }
  return out;
}

function judgePool(ctx: DetectContext, pool: PoolView): Candidate | null {
  const { tuning, control, slo, fastWindowLabel, windowLabel } = ctx;
  const replicas = pool.replicas ?? ctx.state.actuated.replicas[pool.pool] ?? null;
  if (replicas === null) return null;
  const readiness = readScaleReadiness(ctx, pool);
  if (!readiness.settled) return null;

  const fast = pool.fast;
  const main = pool.main;
  const ratePerS = Math.max(pool.fastRatePerS, pool.mainRatePerS);
  const hasTraffic = ratePerS > 0;
  const floor = hasTraffic ? Math.max(1, pool.minReplicas) : pool.minReplicas;
  const ceiling = pool.maxReplicas ?? Number.POSITIVE_INFINITY;
  const learning = ctx.state.learning.get(pool.pool);
  const util = estimateUtilization(pool, ratePerS, replicas, learning, tuning);
  const load = readLoad(pool, learning, tuning);
  const queueShare = load.queueShare;
  const ttftP95 = fast?.ttftMs.p95 ?? null;
  const sloMs = slo.ttft_ms ?? null;
  const costPerReplicaHour = pool.gpuHourUsd === null ? null : pool.gpuHourUsd * pool.gpusPerReplica;
  const hourly = (n: number) => (costPerReplicaHour === null ? null : round(n * costPerReplicaHour, 2));
  const enoughSample = (fast?.requests ?? 0) >= Math.max(5, Math.floor(tuning.minRequests / 2));

  // Scale up: TTFT is load-bound and past (or near) the SLO, or the pool runs hotter than it should.
  const faulty = ctx.suspects.has(pool.pool) || isCircuitOpen(ctx, pool.pool) || ctx.handled.has(pool.pool);
  const queueBound = load.loadBound;
  const sloPressure = sloMs !== null && ttftP95 !== null ? ttftP95 / sloMs : null;
  const breach = sloPressure !== null ? sloPressure > 0.9 : queueBound;
  const hot = util.value !== null && util.value >= tuning.highUtilization;
  if (!faulty && enoughSample && ((queueBound && breach) || hot) && replicas < ceiling) {
    // With a known capacity, size for the target utilization. Without one, grow with the pressure:
    // how far TTFT is past the SLO or prefill is slowed by contention, between 1.25× and 2× per step
    // (a cold start takes minutes; a pool that overshoots is scaled back in after the cooldown).
    const pressure = Math.max(sloPressure ?? 1, load.contention ?? 1);
    const sized =
      util.value !== null && util.capacityKnown
        ? Math.ceil((replicas * util.value) / control.target_utilization)
        : Math.ceil(replicas * Math.min(2, Math.max(1.25, pressure)));
    const to = Math.min(ceiling, Math.max(replicas + 1, sized));
    const why =
      queueBound && breach
        ? `TTFT p95 ${Math.round(ttftP95 ?? 0)} ms${sloMs ? ` against a ${sloMs} ms SLO` : ''} is load-bound (${Math.round((queueShare ?? 0) * 100)}% of it queueing${load.contention !== null && load.contention >= 1.5 ? `, prefill ${round(load.contention, 1)}× slower per token than when uncontended` : ''})`
        : `utilization ${round(util.value ?? 0, 2)} (${util.basis}) is above ${tuning.highUtilization}`;
    const margin = Math.max(
      sloPressure !== null ? sloPressure - 0.9 : 0,
      util.value !== null ? (util.value - tuning.highUtilization) / (1 - tuning.highUtilization) : 0,
      queueShare !== null ? queueShare - tuning.queueBoundShare : 0,
      load.contention !== null ? (load.contention - tuning.contentionRatio) / tuning.contentionRatio : 0,
    );
    return {
      kind: 'scale',
      target: { pool: pool.pool },
      action: { from: replicas, to },
      direction: 'increase',
      reason: `Pool ${pool.pool}: ${why}; add ${to - replicas} replica${to - replicas === 1 ? '' : 's'} (${replicas} → ${to}).`,
      evidence: [
        evidence(`ttftMs.p95{pool=${pool.pool}}`, ttftP95, sloMs, fastWindowLabel),
        evidence(`queueShareOfTtft{pool=${pool.pool}}`, queueShare, tuning.queueBoundShare, fastWindowLabel),
        evidence(
          `prefillMsPerTokenVsFloor{pool=${pool.pool}}`,
          load.contention,
          tuning.contentionRatio,
          fastWindowLabel,
        ),
        evidence(
          `utilization{pool=${pool.pool},basis=${util.basis}}`,
          util.value,
          tuning.highUtilization,
          fastWindowLabel,
        ),
        evidence(`requestsPerS{pool=${pool.pool}}`, ratePerS, null, fastWindowLabel),
        evidence(
          `replicas{pool=${pool.pool}}`,
          replicas,
          ceiling === Number.POSITIVE_INFINITY ? null : ceiling,
          'now',
        ),
      ],
      expectedImpact: {
        summary: `Queueing on ${pool.pool} drains once the new replicas are warm; TTFT p95 back under ${sloMs ?? 'its usual'} ms.`,
        ttftP95Ms: { from: ttftP95 === null ? null : Math.round(ttftP95), to: sloMs },
        utilization: {
          from: util.value === null ? null : round(util.value, 2),
          to: util.value === null ? null : round((util.value * replicas) / to, 2),
        },
        costUsdPerHour: { from: hourly(replicas), to: hourly(to) },
      },
      confidence: scoreConfidence(margin, fast?.requests ?? 0, tuning.minRequests),
      scopePools: [pool.pool],
    };
  }

  // Scale in: the pool holds the SLO with room, and N−1 (or fewer) replicas would still be below the
  // target utilization. A pool with traffic never goes below one replica.
  if (replicas <= floor) return null;
  if (!hasTraffic) {
    return {
      kind: 'scale',
      target: { pool: pool.pool },
      action: { from: replicas, to: floor },
      direction: 'decrease',
      reason: `Pool ${pool.pool} served no requests in the last ${windowLabel}; keep ${floor} replica${floor === 1 ? '' : 's'} (${replicas} → ${floor}).`,
      evidence: [
        evidence(`requests{pool=${pool.pool}}`, 0, 0, windowLabel),
        evidence(`replicas{pool=${pool.pool}}`, replicas, floor, 'now'),
      ],
      expectedImpact: {
        summary: `Idle replicas stop costing money; nothing is served by ${pool.pool} now.`,
        costUsdPerHour: { from: hourly(replicas), to: hourly(floor) },
      },
      confidence: scoreConfidence(0.6, ctx.tuning.minRequests * 4, ctx.tuning.minRequests),
      scopePools: [pool.pool],
    };
  }
  if (!main || main.requests < tuning.minRequests) return null;
  const mainTtftP95 = main.ttftMs.p95;
  const mainQueueShare = readQueueShare(main);
  const holdsSlo =
    sloMs === null
      ? (mainQueueShare ?? 1) < 0.1
      : mainTtftP95 !== null && mainTtftP95 <= tuning.scaleInMaxSloShare * sloMs;
  const calm =
    (queueShare ?? 0) < tuning.queueBoundShare / 2 &&
    (load.contention ?? 1) < 1.5 &&
    (main.errorRate ?? 0) <= 0.05 &&
    !ctx.suspects.has(pool.pool);
  if (!holdsSlo || !calm) return null;
  const costEvidence = { costUsdPerHour: { from: hourly(replicas), to: hourly(replicas - 1) } };

  if (util.value === null || !util.capacityKnown) {
    // Capacity unknown: one replica at a time, only far inside the SLO with next to no queueing.
    const farInside =
      sloMs !== null && mainTtftP95 !== null && mainTtftP95 <= tuning.probeMaxSloShare * sloMs;
    const noQueue =
      (mainQueueShare ?? 1) <= tuning.probeMaxQueueShare && (queueShare ?? 0) <= tuning.probeMaxQueueShare;
    const kvRoom =
      util.value === null || (util.value * replicas) / (replicas - 1) <= control.target_utilization;
    if (!farInside || !noQueue || !kvRoom) return null;
    return {
      kind: 'scale',
      target: { pool: pool.pool },
      action: { from: replicas, to: replicas - 1 },
      direction: 'decrease',
      reason: `Pool ${pool.pool} holds TTFT p95 ${Math.round(mainTtftP95 ?? 0)} ms, under ${Math.round(tuning.probeMaxSloShare * 100)}% of its ${sloMs} ms SLO, with ${Math.round((mainQueueShare ?? 0) * 100)}% of TTFT queueing; its capacity is not known yet, so remove one replica (${replicas} → ${replicas - 1}) and verify.`,
      evidence: [
        evidence(
          `ttftMs.p95{pool=${pool.pool}}`,
          mainTtftP95,
          sloMs === null ? null : tuning.probeMaxSloShare * sloMs,
          windowLabel,
        ),
        evidence(
          `queueShareOfTtft{pool=${pool.pool}}`,
          mainQueueShare,
          tuning.probeMaxQueueShare,
          windowLabel,
        ),
        evidence(
          `utilization{pool=${pool.pool},basis=${util.basis}}`,
          util.value,
          control.target_utilization,
          fastWindowLabel,
        ),
        evidence(`requestsPerS{pool=${pool.pool}}`, ratePerS, null, windowLabel),
      ],
      expectedImpact: {
        summary: `Same goodput on ${pool.pool} with one replica less; TTFT p95 stays under ${sloMs} ms.`,
        ttftP95Ms: { from: mainTtftP95 === null ? null : Math.round(mainTtftP95), to: sloMs },
        ...costEvidence,
      },
      confidence: scoreConfidence(
        sloMs !== null && mainTtftP95 !== null ? (tuning.probeMaxSloShare * sloMs - mainTtftP95) / sloMs : 0,
        main.requests,
        tuning.minRequests,
      ),
      scopePools: [pool.pool],
    };
  }

  const sized = Math.ceil((replicas * util.value) / control.target_utilization);
  const maxStep = Math.max(1, Math.ceil(replicas * tuning.maxScaleInFraction));
  const to = Math.max(floor, sized, replicas - maxStep);
  if (to >= replicas) return null;
  const utilAfter = (util.value * replicas) / to;
  const utilAtMinusOne = (util.value * replicas) / (replicas - 1);
  if (utilAtMinusOne > control.target_utilization) return null;
  return {
    kind: 'scale',
    target: { pool: pool.pool },
    action: { from: replicas, to },
    direction: 'decrease',
    reason: `Pool ${pool.pool} holds TTFT p95 ${Math.round(mainTtftP95 ?? 0)} ms${sloMs ? ` (SLO ${sloMs} ms)` : ''} at utilization ${round(util.value, 2)}; ${to} replica${to === 1 ? '' : 's'} would run at ${round(utilAfter, 2)} (target ${control.target_utilization}) (${replicas} → ${to}).`,
    evidence: [
      evidence(
        `ttftMs.p95{pool=${pool.pool}}`,
        mainTtftP95,
        sloMs === null ? null : tuning.scaleInMaxSloShare * sloMs,
        windowLabel,
      ),
      evidence(
        `utilization{pool=${pool.pool},basis=${util.basis}}`,
        util.value,
        control.target_utilization,
        fastWindowLabel,
      ),
      evidence(
        `utilizationAtNMinus1{pool=${pool.pool}}`,
        utilAtMinusOne,
        control.target_utilization,
        fastWindowLabel,
      ),
      evidence(
        `queueShareOfTtft{pool=${pool.pool}}`,
        mainQueueShare,
        tuning.queueBoundShare / 2,
        windowLabel,
      ),
      evidence(`requestsPerS{pool=${pool.pool}}`, ratePerS, null, windowLabel),
    ],
    expectedImpact: {
      summary: `Same goodput on ${pool.pool} for less money: TTFT p95 stays under ${sloMs ?? 'its current'} ms.`,
      ttftP95Ms: { from: mainTtftP95 === null ? null : Math.round(mainTtftP95), to: sloMs },
      utilization: { from: round(util.value, 2), to: round(utilAfter, 2) },
      costUsdPerHour: { from: hourly(replicas), to: hourly(to) },
    },
    confidence: scoreConfidence(
      (control.target_utilization - utilAtMinusOne) / control.target_utilization +
        (sloMs !== null && mainTtftP95 !== null
          ? (tuning.scaleInMaxSloShare * sloMs - mainTtftP95) / sloMs
          : 0) +
        (util.basis === 'learned_capacity' ? 0.2 : 0),
      main.requests,
      tuning.minRequests,
    ),
    scopePools: [pool.pool],
  };
}
