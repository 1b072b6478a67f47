import type { ControlEngine } from '@governor/control';
import { createPrometheusText } from '@governor/signals';

/**
 * `governor_desired_replicas{pool}` on /metrics: the replica count Governor wants per pool (its last
 * scale decision, else what the pool reports), for KEDA's Prometheus scaler or an HPA on external
 * metrics to act on.
 */
export function createControlMetricsProvider(engine: ControlEngine): () => string {
  return () => {
    const text = createPrometheusText();
    const family = text.family(
      'governor_desired_replicas',
      'gauge',
      'Replicas the control loop wants for the pool (its last scale decision, else the pool’s current count); scale on it with KEDA or an HPA.',
    );
    for (const [pool, replicas] of Object.entries(engine.desiredReplicas()).sort(([a], [b]) =>
      a.localeCompare(b),
    )) {
      family.sample({ pool }, replicas);
    }
    return text.toString();
  };
}
