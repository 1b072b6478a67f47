import { type SignalGroup, classifyUtilizationRatio } from '@governor/conventions';
import { readBootstrap } from './bootstrap.ts';

// Labels an operator reads at a glance. The utilization ratio's bounds are UTILIZATION_BOUNDS (docs/sql.md).

export type BoundLabel = 'memory-bound' | 'compute-bound' | 'balanced' | null;

export function classifyUtilization(ratio: number | null | undefined): BoundLabel {
  const bound = classifyUtilizationRatio(ratio);
  return bound === null ? null : bound === 'balanced' ? 'balanced' : `${bound}-bound`;
}

export interface Slo {
  ttftMs: number | null;
  e2eMs: number | null;
}

export type PoolState = 'healthy' | 'slo-breach' | 'errors' | 'idle' | 'no-data';

export interface PoolStatus {
  state: PoolState;
  reasons: string[];
}

/** Errors above 5% or any SLO breach at p95 mark a pool; no requests is idle (it still costs money). */
export function describePoolState(group: SignalGroup, slo: Slo): PoolStatus {
  if (group.requests === 0) {
    return group.replicas
      ? { state: 'idle', reasons: ['no requests in the range'] }
      : { state: 'no-data', reasons: [] };
  }
  const reasons: string[] = [];
  let state: PoolState = 'healthy';
  if (slo.ttftMs !== null && group.ttftMs.p95 !== null && group.ttftMs.p95 > slo.ttftMs) {
    reasons.push(`TTFT p95 above the ${slo.ttftMs} ms SLO`);
    state = 'slo-breach';
  }
  if (slo.e2eMs !== null && group.e2eMs.p95 !== null && group.e2eMs.p95 > slo.e2eMs) {
    reasons.push(`e2e p95 above the ${slo.e2eMs} ms SLO`);
    state = 'slo-breach';
  }
  if (group.errorRate !== null && group.errorRate > 0.05) {
    reasons.push(`${(group.errorRate * 100).toFixed(1)}% errors`);
    if (state === 'healthy') state = 'errors';
  }
  return { state, reasons };
}

export const POOL_STATE_LABELS: Record<PoolState, string> = {
  healthy: 'Healthy',
  'slo-breach': 'SLO breach',
  errors: 'Errors',
  idle: 'Idle',
  'no-data': 'No data',
};

/**
 * The SLO for chart lines and pool states: from a signals answer when the server includes one
 * (`slo: {ttftMs, e2eMs}`), else from the bootstrap Governor writes into index.html.
 */
export function readSlo(snapshot: unknown, fallback: Slo | null = readBootstrap()?.slo ?? null): Slo {
  type RawSlo = { ttftMs?: unknown; e2eMs?: unknown; ttft_ms?: unknown; e2e_ms?: unknown };
  const slo: RawSlo | undefined = (snapshot as { slo?: RawSlo } | null)?.slo ?? fallback ?? undefined;
  const pick = (...values: unknown[]) => {
    const n = values.find((v) => typeof v === 'number');
    return typeof n === 'number' ? n : null;
  };
  return { ttftMs: pick(slo?.ttftMs, slo?.ttft_ms), e2eMs: pick(slo?.e2eMs, slo?.e2e_ms) };
}

export function poolName(group: SignalGroup): string {
  const pool = group.key.pool;
  return pool === null || pool === undefined ? '(no pool)' : String(pool);
}
