import type { Autoscaler, PoolObservation, ScaleDecision } from './autoscaler-types.ts';

export interface HpaOptions {
  /** Target average GPU utilization in percent. */
  targetUtilPct?: number;
  syncPeriodMs?: number;
  scaleDownStabilizationMs?: number;
  /** Ratios within this distance of 1 do not scale (HPA's --horizontal-pod-autoscaler-tolerance). */
  tolerance?: number;
}

/**
 * Kubernetes HPA on DCGM_FI_DEV_GPU_UTIL as documented: every 15 s,
 * desired = ⌈current × metric / target⌉ with a 10% tolerance; not-yet-ready pods count as 0%
 * usage when scaling up; a scale-down takes the highest recommendation of the last 5 minutes
 * (stabilization window); default scale-up policy allows max(+4 pods, +100%) per period.
 * The metric is the mean utilization of ready replicas over the last sync period.
 */
export function createHpaAutoscaler(options: HpaOptions = {}): Autoscaler {
  const target = options.targetUtilPct ?? 70;
  const periodMs = options.syncPeriodMs ?? 15_000;
  const stabilizationMs = options.scaleDownStabilizationMs ?? 300_000;
  const tolerance = options.tolerance ?? 0.1;
  const lastBusy = new Map<string, { busyMs: number; atMs: number }>();
  const history = new Map<string, Array<{ atMs: number; replicas: number }>>();

  const measureUtilPct = (nowMs: number, pool: PoolObservation): number | null => {
    let sum = 0;
    let count = 0;
    for (const r of pool.replicas) {
      const mark = lastBusy.get(r.id) ?? { busyMs: 0, atMs: Math.max(r.readyMs, nowMs - periodMs) };
      const spanMs = nowMs - Math.max(mark.atMs, r.readyMs);
      lastBusy.set(r.id, { busyMs: r.busyMs, atMs: nowMs });
      if (spanMs <= 0) continue;
      sum += Math.min(100, (100 * (r.busyMs - mark.busyMs)) / spanMs);
      count += 1;
    }
    return count > 0 ? sum / count : null;
  };

  return {
    name: 'hpa',
    intervalMs: periodMs,
    decide(nowMs, pools) {
      const decisions: ScaleDecision[] = [];
      for (const pool of pools) {
        const util = measureUtilPct(nowMs, pool);
        if (util === null) continue;
        const current = pool.desired;
        const counted = pool.ready + pool.starting;
        // Unready pods are assumed at 0% when the ratio says scale up (HPA's missing-pods rule).
        const readyRatio = util / target;
        const ratio = readyRatio > 1 && counted > 0 ? (util * pool.ready) / counted / target : readyRatio;
        let recommendation = current;
        if (Math.abs(ratio - 1) > tolerance) recommendation = Math.ceil(counted * ratio);
        recommendation = Math.max(pool.spec.minReplicas, Math.min(pool.spec.maxReplicas, recommendation));
        const list = (history.get(pool.name) ?? []).filter((h) => nowMs - h.atMs < stabilizationMs);
        list.push({ atMs: nowMs, replicas: recommendation });
        history.set(pool.name, list);
        let desired = recommendation;
        if (recommendation < current) desired = Math.min(current, Math.max(...list.map((h) => h.replicas)));
        else if (recommendation > current)
          desired = Math.min(recommendation, Math.max(current + 4, current * 2));
        if (desired !== current) decisions.push({ pool: pool.name, replicas: desired });
      }
      return decisions;
    },
  };
}
