import type { PoolLearning } from '../engine/control-types.ts';
import type { PoolView } from '../observe-fleet.ts';
import { type LoadReading, type Utilization, round } from './pool-signals.ts';

// What the scale rules read about one pool in one tick.

export interface ScaleInputs {
  pool: PoolView;
  replicas: number;
  ratePerS: number;
  floor: number;
  ceiling: number;
  learning: PoolLearning | undefined;
  util: Utilization;
  load: LoadReading;
  /** TTFT and e2e objectives (ms; config `slo`), null where not configured. */
  sloMs: number | null;
  e2eSloMs: number | null;
  costPerReplicaHour: number | null;
  /** Its requests fail (isFailing, short window): its latency is errors and retries as much as load. */
  failing: boolean;
  /** Traffic is being moved off it for a resource bound this tick (memory, cache): not more of the same. */
  shiftedForResource: boolean;
  /**
   * How much a shift planned this tick multiplies its load (≥ 1; infinite where it had no share): a
   * scale-in is sized for that load, which the window has not seen.
   */
  shareGain: number;
}

export function hourlyCost(s: ScaleInputs, n: number): number | null {
  return s.costPerReplicaHour === null ? null : round(n * s.costPerReplicaHour, 2);
}
