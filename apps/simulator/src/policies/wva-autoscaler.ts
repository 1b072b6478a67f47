import type { Autoscaler, ScaleDecision } from './autoscaler-types.ts';

export interface WvaOptions {
  intervalMs?: number;
  kvSaturation?: number;
  queueSaturation?: number;
  kvSpareTrigger?: number;
  queueSpareTrigger?: number;
}

/**
 * llm-d workload-variant-autoscaler, saturation mode: a replica is saturated at KV usage ≥ 0.8 or
 * ≥ 5 waiting requests. Spare capacity is averaged over non-saturated replicas; scale up by one when
 * spare KV < 0.1 or spare queue < 3 (or every replica is saturated); scale in by one only if the
 * load spread over N−1 replicas would still leave both spare margins. No decision while a previous
 * scale-up is still starting, so one cold start is not answered with another.
 */
export function createWvaAutoscaler(options: WvaOptions = {}): Autoscaler {
  const kvSat = options.kvSaturation ?? 0.8;
  const queueSat = options.queueSaturation ?? 5;
  const kvSpare = options.kvSpareTrigger ?? 0.1;
  const queueSpare = options.queueSpareTrigger ?? 3;
  return {
    name: 'wva',
    intervalMs: options.intervalMs ?? 30_000,
    decide(_nowMs, pools) {
      const decisions: ScaleDecision[] = [];
      for (const pool of pools) {
        if (pool.starting > 0 || pool.replicas.length === 0) continue;
        const n = pool.replicas.length;
        const unsaturated = pool.replicas.filter((r) => r.kvUsage < kvSat && r.waiting < queueSat);
        let desired = pool.desired;
        if (unsaturated.length === 0) {
          desired = pool.desired + 1;
        } else {
          const spareKv = unsaturated.reduce((s, r) => s + (kvSat - r.kvUsage), 0) / unsaturated.length;
          const spareQueue = unsaturated.reduce((s, r) => s + (queueSat - r.waiting), 0) / unsaturated.length;
          if (spareKv < kvSpare || spareQueue < queueSpare) {
            desired = pool.desired + 1;
          } else if (n > 1 && pool.desired > pool.spec.minReplicas) {
            const kvAfter = pool.replicas.reduce((s, r) => s + r.kvUsage, 0) / (n - 1);
            const queueAfter = pool.replicas.reduce((s, r) => s + r.waiting, 0) / (n - 1);
            if (kvSat - kvAfter >= kvSpare && queueSat - queueAfter >= queueSpare) desired = pool.desired - 1;
          }
        }
        desired = Math.max(pool.spec.minReplicas, Math.min(pool.spec.maxReplicas, desired));
        if (desired !== pool.desired) decisions.push({ pool: pool.name, replicas: desired });
      }
      return decisions;
    },
  };
}
