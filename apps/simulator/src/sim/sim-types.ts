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
  /** HTTP status the replica answered with (200, or its error status); 0 when it never answered. */
  upstreamStatusCode: number;
  done: boolean;
}

/** Receives finished attempts, gauge samples and scrapes (the telemetry exporter, or nothing). */
export interface TelemetrySink {
  onAttemptFinished(attempt: Attempt): void;
  /** Fleet-wide samples every `metricsIntervalMs` (the --governor-attributes shapes). */
  onMetricsSample(sample: MetricsSample): void;
  /** One scrape of one target every `scrapeIntervalMs`, at the target's own phase (real shapes). */
  onScrape?(scrape: ScrapeSample): void;
}

/** A vLLM pod's /metrics as scraped: only `up` = 0 while its server is not up yet. */
export interface RuntimeScrape {
  kind: 'runtime';
  timeMs: number;
  pool: string;
  /** The served model name (vLLM's `model_name` label). */
  model: string;
  replica: string;
  /** Replica index within its pool: the pod's identity. */
  podIndex: number;
  nodeIndex: number;
  gpuType: string;
  region: string;
  status: 'starting' | 'running' | 'draining';
  /** When the vLLM process started (its counters' start time). */
  processStartMs: number;
  kvUsage: number;
  waiting: number;
  running: number;
  counters: EngineCounters;
}

export interface GpuScrape {
  /** GPU index on the node. */
  gpu: number;
  /** The workload holding the GPU, or null when it is free. */
  holder: { pool: string; replica: string; podIndex: number; status: ReplicaSample['status'] } | null;
  /** Share of the interval since the node's previous scrape with a kernel running (0–100). */
  utilPct: number;
  /** Of the busy time, the share spent in prefill (compute-bound) rather than decode (memory-bound). */
  prefillShare: number;
  /** Frame-buffer memory in use, as a share of the GPU's memory. */
  memoryUsedShare: number;
}

/** A GPU node's DCGM exporter as scraped. */
export interface GpuNodeScrape {
  kind: 'gpu-node';
  timeMs: number;
  nodeIndex: number;
  gpuType: string;
  region: string;
  gpus: GpuScrape[];
}

export type ScrapeSample = RuntimeScrape | GpuNodeScrape;

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
