import type { Autoscaler, ScaleDecision } from '../policies/autoscaler-types.ts';
import type { OracleSchedule } from './plan-oracle-schedule.ts';

/**
 * Plays a planned schedule: at every interval boundary each pool is asked for the replicas the
 * schedule holds for that interval, whatever the pools look like (it already knows).
 */
export function createOracleAutoscaler(schedule: OracleSchedule): Autoscaler {
  return {
    name: 'oracle',
    intervalMs: schedule.intervalMs,
    decide(nowMs, pools) {
      const index = Math.floor(nowMs / schedule.intervalMs);
      const decisions: ScaleDecision[] = [];
      for (const planned of schedule.pools) {
        const pool = pools.find((p) => p.name === planned.pool);
        const desired = planned.desired[Math.min(index, planned.desired.length - 1)];
        if (pool && desired !== undefined && desired !== pool.desired)
          decisions.push({ pool: planned.pool, replicas: desired });
      }
      return decisions;
    },
  };
}
