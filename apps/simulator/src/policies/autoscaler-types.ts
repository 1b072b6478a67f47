import type { PoolSpec } from '../fleet/fleet-spec.ts';

/** What an autoscaler sees of a pool at a sync: the same values the emitted gauges carry. */
export interface PoolObservation {
  name: string;
  spec: PoolSpec;
  /** Replica count the autoscaler last asked for (the Deployment's spec.replicas). */
  desired: number;
  ready: number;
  starting: number;
  replicas: ReplicaObservation[];
}

export interface ReplicaObservation {
  id: string;
  kvUsage: number;
  waiting: number;
  running: number;
  /** Cumulative time with a non-empty batch (the basis of DCGM_FI_DEV_GPU_UTIL). */
  busyMs: number;
  readyMs: number;
}

export interface ScaleDecision {
  pool: string;
  replicas: number;
}

export interface Autoscaler {
  readonly name: string;
  readonly intervalMs: number;
  decide(nowMs: number, pools: PoolObservation[]): ScaleDecision[];
}
