import type { Autoscaler, ScaleDecision } from './autoscaler-types.ts';

export interface KedaOptions {
  /** Waiting requests per replica (Prometheus scaler, metricType AverageValue). */
  threshold?: number;
  pollingIntervalMs?: number;
  cooldownMs?: number;
}

/**
 * KEDA's Prometheus scaler on sum(vllm:num_requests_waiting) per pool with an AverageValue target
 * of 5: every 15 s desired = ⌈waiting / 5⌉ (within the HPA's 10% tolerance), bounded by the pool's
 * min/max replicas. Scale-up applies at once; a scale-down takes the highest desired count of the
 * last 360 s (the cooldown, applied the way the HPA that KEDA drives stabilizes scale-down).
 */
export function createKedaAutoscaler(options: KedaOptions = {}): Autoscaler {
  const threshold = options.threshold ?? 5;
  const pollingMs = options.pollingIntervalMs ?? 15_000;
  const cooldownMs = options.cooldownMs ?? 360_000;
  const history = new Map<string, Array<{ atMs: number; replicas: number }>>();
  return {
    name: 'keda',
    intervalMs: pollingMs,
    decide(nowMs, pools) {
      const decisions: ScaleDecision[] = [];
      for (const pool of pools) {
        if (pool.ready === 0 && pool.starting === 0 && pool.desired > 0) continue;
        const waiting = pool.replicas.reduce((sum, r) => sum + r.waiting, 0);
        const current = pool.desired;
        const ratio = current > 0 ? waiting / current / threshold : waiting > 0 ? 2 : 1;
        let recommendation = current;
        if (current === 0 || Math.abs(ratio - 1) > 0.1) recommendation = Math.ceil(waiting / threshold);
        recommendation = Math.max(pool.spec.minReplicas, Math.min(pool.spec.maxReplicas, recommendation));
        const list = (history.get(pool.name) ?? []).filter((h) => nowMs - h.atMs < cooldownMs);
        list.push({ atMs: nowMs, replicas: recommendation });
        history.set(pool.name, list);
        const desired =
          recommendation < current
            ? Math.min(current, Math.max(...list.map((h) => h.replicas)))
            : recommendation;
        if (desired !== current) decisions.push({ pool: pool.name, replicas: desired });
      }
      return decisions;
    },
  };
}
