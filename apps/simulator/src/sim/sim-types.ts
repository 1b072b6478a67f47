import type { Outcome } from '@governor/conventions';
import type { PoolSpec } from '../fleet/fleet-spec.ts';
import type { EngineCounters, Replica, RuntimeSeq } from '../fleet/replica-engine.ts';
import type { WorkloadTask } from '../workload/workload-types.ts';

/** How a client behaves when a call fails. */
export interface ClientRetryPolicy {
  maxAttempts: number;
  timeoutMs: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** ± share of the backoff drawn at random. */
  jitter: number;
  /** Client-side retry budget (retries per first attempt over 10 s, plus 1/s); null = unlimited. */
  budgetRatio: number | null;
}

/** OpenAI-SDK-like defaults: 3 attempts, exponential backoff from 1 s, 5-minute timeout. */
export const DEFAULT_RETRY_POLICY: ClientRetryPolicy = {
  maxAttempts: 3,
  timeoutMs: 300_000,
  backoffBaseMs: 1000,
  backoffMaxMs: 20_000,
  jitter: 0.2,
  budgetRatio: null,
};

export interface TaskRun {
  spec: WorkloadTask;
  serial: number;
  model: string;
  startMs: number;
  stepsFinal: number;
  failed: boolean;
  sloOk: boolean;
  done: boolean;
  incomplete: boolean;
  endMs: number;
}

export interface PoolStats {
  requests: number;
  errors: number;
  ttftMs: number[];
  e2eMs: number[];
  queueMs: number[];
  promptTokens: number;
  cachedTokens: number;
}

export interface PoolRun {
  spec: PoolSpec;
  desired: number;
  replicas: Replica[];
  weight: number;
  breakerOpen: boolean;
  breakerToken: number;
  breakerUntilMs: number | null;
  slowdown: number;
  errorRate: number;
  coldStartFactor: number;
  warmupMs: number;
  warmSlowdown: number;
  nextReplicaIndex: number;
  paidCount: number;
  paidIntegralMs: number;
  lastPaidChangeMs: number;
  paidMax: number;
  lastScale: { direction: number; atMs: number } | null;
  stats: PoolStats;
}

/** One attempt of one step of a task = one trace. Extends the replica's view of the request. */
export interface Attempt extends RuntimeSeq {
  serial: number;
  task: TaskRun;
  stepIndex: number;
  attemptNo: number;
  model: string;
  policy: ClientRetryPolicy;
  startMs: number;
  gatewayEndMs: number;
  routeEndMs: number;
  cacheEndMs: number;
  routedCachedTokens: number;
  pool: PoolRun | null;
  replica: Replica | null;
  replicaEndMs: number;
  endMs: number;
  outcome: Outcome | null;
  errorType: string | null;
  statusCode: number;
  done: boolean;
}

/** Receives finished attempts and gauge samples (the telemetry exporter, or nothing). */
export interface TelemetrySink {
  onAttemptFinished(attempt: Attempt): void;
  onMetricsSample(sample: MetricsSample): void;
}

export interface ReplicaSample {
  pool: string;
  replica: string;
  status: 'starting' | 'running' | 'draining';
  kvUsage: number;
  waiting: number;
  running: number;
  gpuUtilPct: number;
  /** Since when the counters count (the replica became ready); -1 while starting. */
  readyMs: number;
  /** The runtime's cumulative counters at the sample (a copy). */
  counters: EngineCounters;
}

export interface MetricsSample {
  timeMs: number;
  pools: Array<{ pool: string; paidReplicas: number }>;
  replicas: ReplicaSample[];
}
