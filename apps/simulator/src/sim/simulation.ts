// The discrete-event core: clients issue workflow steps, the gateway admits or rejects them, the
// router picks a pool and a replica, replicas batch and stream, clients retry or move on. Everything
// runs on simulated time from one event queue; nothing here touches the network or the wall clock.

import type { Outcome } from '@governor/conventions';
import { createEventQueue } from '../engine/event-queue.ts';
import { createRng, hashString, hashUniform } from '../engine/random.ts';
import type { Rng } from '../engine/random.ts';
import type { FaultSpec } from '../faults/fault-plan.ts';
import { FAULT_PARAMS } from '../faults/fault-plan.ts';
import type { FleetSpec, PoolSpec } from '../fleet/fleet-spec.ts';
import { createNodePlacement } from '../fleet/node-placement.ts';
import type { GpuNode, NodePlacement } from '../fleet/node-placement.ts';
import {
  abortSeq,
  completeStep,
  copyEngineCounters,
  createReplica,
  enqueueSeq,
  evictAll,
  getBusyMs,
  getKvUsage,
  kickReplica,
  recordFinishedRequest,
  syncReplica,
  wakeReplica,
} from '../fleet/replica-engine.ts';
import type { Replica, ReplicaHost, RuntimeSeq } from '../fleet/replica-engine.ts';
import type { Autoscaler, PoolObservation } from '../policies/autoscaler-types.ts';
import { PREFIX_BLOCK_TOKENS, countPrefixBlocks } from '../workload/workload-types.ts';
import type { Workload, WorkloadTask } from '../workload/workload-types.ts';
import { DEFAULT_RETRY_POLICY } from './sim-types.ts';
import type {
  Attempt,
  ClientRetryPolicy,
  MetricsSample,
  GpuScrape,
  PoolRun,
  TaskRun,
  TelemetrySink,
} from './sim-types.ts';

export interface SimulationConfig {
  seed: number;
  workload: Workload;
  fleet: FleetSpec;
  durationMs: number;
  /** After arrivals stop, in-flight tasks may finish for at most this long. */
  drainMs: number;
  faults: FaultSpec[];
  /** Fleet-wide gauge samples (--governor-attributes shapes); 0 = none. */
  metricsIntervalMs: number;
  /** Per-target scrapes (vLLM pods, DCGM exporters), each at its own stable phase; 0 = none. */
  scrapeIntervalMs?: number;
  /** Lockstep control ticks; 0 = none. */
  controlIntervalMs: number;
  autoscaler: Autoscaler | null;
  sink: TelemetrySink | null;
  sloTtftMs: number;
  sloE2eMs: number;
  /** A scale in the opposite direction within this window of the previous one is a reversal. */
  reversalWindowMs: number;
}

type SimEventPayload =
  | { k: 'root' }
  | { k: 'task'; spec: WorkloadTask }
  | { k: 'step'; task: TaskRun; step: number }
  | { k: 'attempt'; task: TaskRun; step: number; attemptNo: number }
  | { k: 'arrive'; attempt: Attempt }
  | { k: 'replicaStep'; replica: Replica; version: number }
  | { k: 'timeout'; attempt: Attempt }
  | { k: 'ready'; replica: Replica }
  | { k: 'breaker'; pool: PoolRun; token: number }
  | { k: 'faultStart'; fault: FaultSpec }
  | { k: 'faultEnd'; fault: FaultSpec }
  | { k: 'preempt'; fault: FaultSpec }
  | { k: 'metrics' }
  | { k: 'scrape'; replica: Replica }
  | { k: 'nodeScrape'; node: GpuNode }
  | { k: 'autoscale' }
  | { k: 'control' }
  | { k: 'arrivalsEnd' }
  | { k: 'hardStop' };

/** vLLM's default gpu_memory_utilization: the share of GPU memory it takes once its engine is up. */
const VLLM_GPU_MEMORY_SHARE = 0.9;

/** Same-time ordering: request events, then gauges, then autoscaler, then lockstep control. */
const PRIORITY = { normal: 1, metrics: 2, autoscale: 3, control: 4 } as const;

const STREAM_END_MS = 0.5;
const ERROR_RESPONSE_MS = 0.3;
const NETWORK_HOP_MS = 0.3;
const BASE_ERROR_RATE = 0.0005;
const RETRY_WINDOW_MS = 10_000;
const NON_RETRYABLE = new Set(['retry_budget_exceeded', 'context_length_exceeded', 'model_not_found']);

export type RunUntilResult = 'limit' | 'control' | 'finished' | 'events';

export interface ActionEffects {
  scaled?: boolean;
}

export class Simulation {
  readonly config: SimulationConfig;
  readonly pools: PoolRun[];
  readonly startEpochMs: number;
  nowMs = 0;
  finished = false;
  simEndMs = 0;

  // Counters that make up the summary.
  tasksStarted = 0;
  tasksDone = 0;
  tasksSucceeded = 0;
  tasksWithinSlo = 0;
  tasksIncomplete = 0;
  requests = 0;
  retries = 0;
  readonly outcomes: Record<Outcome, number> = {
    success: 0,
    error: 0,
    timeout: 0,
    rejected: 0,
    preempted: 0,
    cancelled: 0,
  };
  readonly ttftMs: number[] = [];
  readonly e2eMs: number[] = [];
  actions = 0;
  reversals = 0;
  readonly actionLog: Array<{ atMs: number; source: string; kind: string; detail: string }> = [];
  /**
   * Per pool-targeted fault, when the first request the pool served after the fault began ended: the
   * earliest its requests could show the fault (a pool between bursts shows nothing).
   */
  readonly faultFirstRequestMs = new Map<FaultSpec, number>();

  // Control state set by actions.
  readonly minPriorityByModel = new Map<string, number>();
  retryBudgetRatio: number | null = null;
  readonly downgrades = new Map<string, { toModel: string; fraction: number }>();
  readonly regionsDown = new Set<string>();

  private readonly queue = createEventQueue<SimEventPayload>();
  private readonly fleetRng: Rng;
  private readonly clientRng: Rng;
  private readonly poolsByName = new Map<string, PoolRun>();
  private readonly live = new Set<Attempt>();
  private readonly tasks: TaskRun[] = [];
  private rootIndex = 0;
  private attemptSerial = 0;
  private taskSerial = 0;
  private openTasks = 0;
  private arrivalsClosed = false;
  private stormPolicy: ClientRetryPolicy | null = null;
  private readonly retryWindow = {
    bucketSecond: new Float64Array(10),
    firsts: new Float64Array(10),
    retries: new Float64Array(10),
  };
  private readonly host: ReplicaHost;
  private readonly utilMarks = new Map<Replica, { busyMs: number; atMs: number }>();
  /** Where replicas run; DCGM scrapes report per node. */
  readonly placement: NodePlacement = createNodePlacement();
  private readonly gpuMarks = new Map<
    Replica,
    { busyMs: number; atMs: number; promptTokens: number; generationTokens: number; iterations: number }
  >();
  private readonly processStartMs = new Map<Replica, number>();

  constructor(config: SimulationConfig) {
    this.config = config;
    this.startEpochMs = config.workload.startEpochMs;
    this.fleetRng = createRng(config.seed, 'fleet');
    this.clientRng = createRng(config.seed, 'clients');
    this.host = {
      scheduleStep: (replica, atMs) =>
        this.push(atMs, { k: 'replicaStep', replica, version: replica.version }),
      getSlowdown: (replica, atMs) => {
        const pool = this.poolsByName.get(replica.poolName);
        const warm = atMs < replica.warmUntilMs ? replica.warmSlowdown : 1;
        return (pool?.slowdown ?? 1) * warm;
      },
      onAdmit: (replica, seq) => this.injectFailure(replica, seq),
      onFinished: (replica, seq, atMs, errorType) =>
        this.onReplicaFinished(replica, seq as Attempt, atMs, errorType),
      onIdle: (replica, atMs) => {
        if (replica.status === 'draining' && replica.waitingCount === 0) this.removeReplica(replica, atMs);
      },
    };
    this.pools = config.fleet.pools.map((spec) => this.createPoolRun(spec));
    for (const pool of this.pools) this.poolsByName.set(pool.spec.name, pool);
    for (const pool of this.pools) for (const r of pool.replicas) this.onReplicaAdded(r);
    this.schedulePeriodic();
  }

  private createPoolRun(spec: PoolSpec): PoolRun {
    const pool: PoolRun = {
      spec,
      desired: spec.replicas,
      replicas: [],
      weight: spec.weight,
      breakerOpen: false,
      breakerToken: 0,
      breakerUntilMs: null,
      slowdown: 1,
      errorRate: BASE_ERROR_RATE,
      coldStartFactor: 1,
      warmupMs: 0,
      warmSlowdown: 1,
      nextReplicaIndex: 0,
      paidCount: 0,
      paidIntegralMs: 0,
      lastPaidChangeMs: 0,
      paidMax: 0,
      lastScale: null,
      stats: { requests: 0, errors: 0, ttftMs: [], e2eMs: [], queueMs: [], promptTokens: 0, cachedTokens: 0 },
    };
    for (let i = 0; i < spec.replicas; i++) {
      pool.replicas.push(createReplica(this.nextReplicaId(pool), spec.name, spec, 'running', 0));
    }
    pool.paidCount = spec.replicas;
    pool.paidMax = spec.replicas;
    return pool;
  }

  /**
   * A new pod: placed on a node, and discovered as a scrape target at once. A replica present at
   * the start became ready then, so its process started one cold start earlier.
   */
  private onReplicaAdded(replica: Replica): void {
    this.processStartMs.set(
      replica,
      replica.status === 'running' ? replica.readyMs - replica.spec.coldStartMs : replica.createdMs,
    );
    const { node, added } = this.placement.place(replica);
    replica.nodeIndex = node.index;
    const intervalMs = this.config.scrapeIntervalMs ?? 0;
    if (intervalMs <= 0) return;
    this.push(this.nextScrapeMs(`pod/${replica.id}`), { k: 'scrape', replica }, PRIORITY.metrics);
    if (added)
      this.push(this.nextScrapeMs(`node/${node.index}`), { k: 'nodeScrape', node }, PRIORITY.metrics);
  }

  /** A target's next scrape: its phase is a stable hash of the target, as Prometheus spreads targets. */
  private nextScrapeMs(targetKey: string): number {
    const intervalMs = this.config.scrapeIntervalMs!;
    const phaseMs = Math.floor(hashUniform(this.config.seed, hashString(targetKey), 0x5c4a) * intervalMs);
    const k = Math.max(0, Math.ceil((this.nowMs - phaseMs) / intervalMs));
    return phaseMs + k * intervalMs;
  }

  private nextReplicaId(pool: PoolRun): string {
    const id = `${pool.spec.name}-${pool.nextReplicaIndex}`;
    pool.nextReplicaIndex += 1;
    return id;
  }

  private push(atMs: number, payload: SimEventPayload, priority: number = PRIORITY.normal): void {
    this.queue.push(Math.max(atMs, this.nowMs), payload, priority);
  }

  private schedulePeriodic(): void {
    const { durationMs, drainMs, metricsIntervalMs, controlIntervalMs, autoscaler } = this.config;
    if (this.config.workload.tasks.length > 0)
      this.push(this.config.workload.tasks[0]!.startMs, { k: 'root' });
    if (metricsIntervalMs > 0) this.push(metricsIntervalMs, { k: 'metrics' }, PRIORITY.metrics);
    if (autoscaler) this.push(autoscaler.intervalMs, { k: 'autoscale' }, PRIORITY.autoscale);
    if (controlIntervalMs > 0) this.push(controlIntervalMs, { k: 'control' }, PRIORITY.control);
    for (const fault of this.config.faults) {
      if (fault.kind === 'agentic-surge') continue;
      this.push(fault.startMs, { k: 'faultStart', fault });
      this.push(fault.endMs, { k: 'faultEnd', fault });
    }
    this.push(durationMs, { k: 'arrivalsEnd' });
    this.push(durationMs + drainMs, { k: 'hardStop' });
  }

  get liveAttempts(): number {
    return this.live.size;
  }

  get nextEventTimeMs(): number {
    return this.queue.peekTimeMs();
  }

  getPool(name: string): PoolRun | undefined {
    return this.poolsByName.get(name);
  }

  /**
   * Processes events up to `limitMs` (inclusive) or `maxEvents`, whichever comes first. Returns
   * 'control' right after a lockstep control tick so the caller can talk to Governor.
   */
  runUntil(limitMs: number, maxEvents: number): RunUntilResult {
    let processed = 0;
    while (!this.finished) {
      if (this.queue.peekTimeMs() > limitMs) {
        this.nowMs = Math.max(this.nowMs, Math.min(limitMs, this.queue.peekTimeMs()));
        return 'limit';
      }
      if (processed >= maxEvents) return 'events';
      const event = this.queue.pop()!;
      this.nowMs = event.timeMs;
      processed += 1;
      if (this.handle(event.payload)) return 'control';
    }
    return 'finished';
  }

  private handle(ev: SimEventPayload): boolean {
    switch (ev.k) {
      case 'root':
        this.onRootArrival();
        return false;
      case 'task':
        this.startTask(ev.spec);
        return false;
      case 'step':
        this.startAttempt(ev.task, ev.step, 1);
        return false;
      case 'attempt':
        this.startAttempt(ev.task, ev.step, ev.attemptNo);
        return false;
      case 'arrive':
        this.onArrive(ev.attempt);
        return false;
      case 'replicaStep':
        completeStep(this.host, ev.replica, ev.version, this.nowMs);
        return false;
      case 'timeout':
        this.onTimeout(ev.attempt);
        return false;
      case 'ready':
        this.onReplicaReady(ev.replica);
        return false;
      case 'breaker':
        if (ev.pool.breakerToken === ev.token && ev.pool.breakerOpen) {
          ev.pool.breakerOpen = false;
          ev.pool.breakerUntilMs = null;
        }
        return false;
      case 'faultStart':
        this.startFault(ev.fault);
        return false;
      case 'faultEnd':
        this.endFault(ev.fault);
        return false;
      case 'preempt':
        this.preemptOne(ev.fault);
        return false;
      case 'metrics':
        this.emitMetrics();
        this.push(this.nowMs + this.config.metricsIntervalMs, { k: 'metrics' }, PRIORITY.metrics);
        return false;
      case 'scrape':
        this.scrapeReplica(ev.replica);
        return false;
      case 'nodeScrape':
        this.scrapeNode(ev.node);
        return false;
      case 'autoscale':
        this.runAutoscaler();
        return false;
      case 'control':
        this.push(this.nowMs + this.config.controlIntervalMs, { k: 'control' }, PRIORITY.control);
        return true;
      case 'arrivalsEnd':
        this.arrivalsClosed = true;
        if (this.openTasks === 0) this.finish();
        return false;
      case 'hardStop':
        this.finish();
        return false;
    }
  }

  // ---- tasks and client behaviour -------------------------------------------------------------

  private onRootArrival(): void {
    const tasks = this.config.workload.tasks;
    const spec = tasks[this.rootIndex];
    this.rootIndex += 1;
    if (spec && spec.startMs < this.config.durationMs) this.startTask(spec);
    const next = tasks[this.rootIndex];
    if (next && next.startMs < this.config.durationMs) this.push(next.startMs, { k: 'root' });
  }

  private startTask(spec: WorkloadTask): void {
    if (this.arrivalsClosed || this.finished) return;
    const serial = this.taskSerial++;
    let model = spec.model;
    const downgrade = this.downgrades.get(model);
    if (downgrade && hashUniform(this.config.seed, hashString(spec.id), 7) < downgrade.fraction)
      model = downgrade.toModel;
    const task: TaskRun = {
      spec,
      serial,
      model,
      startMs: this.nowMs,
      stepsFinal: 0,
      failed: false,
      sloOk: true,
      done: false,
      incomplete: false,
      endMs: -1,
    };
    this.tasks.push(task);
    this.tasksStarted += 1;
    this.openTasks += 1;
    if (spec.steps.length === 0) {
      this.completeTask(task);
      return;
    }
    if (spec.openLoop) {
      spec.steps.forEach((step, index) => {
        this.push(this.nowMs + (step.atOffsetMs ?? 0), { k: 'step', task, step: index });
      });
    } else {
      this.push(this.nowMs + spec.steps[0]!.thinkMs, { k: 'step', task, step: 0 });
    }
  }

  private currentPolicy(): ClientRetryPolicy {
    return this.stormPolicy ?? DEFAULT_RETRY_POLICY;
  }

  private countRetryWindow(isRetry: boolean): void {
    const w = this.retryWindow;
    const bucket = Math.floor(this.nowMs / 1000);
    const slot = bucket % 10;
    if (w.bucketSecond[slot] !== bucket) {
      w.bucketSecond[slot] = bucket;
      w.firsts[slot] = 0;
      w.retries[slot] = 0;
    }
    if (isRetry) w.retries[slot]! += 1;
    else w.firsts[slot]! += 1;
  }

  /** Retries and first attempts over the last 10 s (Finagle-style retry budget window). */
  private readRetryWindow(): { firsts: number; retries: number } {
    const w = this.retryWindow;
    const current = Math.floor(this.nowMs / 1000);
    let firsts = 0;
    let retries = 0;
    for (let i = 0; i < 10; i++) {
      if (current - w.bucketSecond[i]! < RETRY_WINDOW_MS / 1000) {
        firsts += w.firsts[i]!;
        retries += w.retries[i]!;
      }
    }
    return { firsts, retries };
  }

  /** A budget of `ratio` retries per first attempt plus a floor of 1 retry/s, over 10 s. */
  private isWithinRetryBudget(ratio: number): boolean {
    const { firsts, retries } = this.readRetryWindow();
    return retries < ratio * firsts + RETRY_WINDOW_MS / 1000;
  }

  private startAttempt(task: TaskRun, stepIndex: number, attemptNo: number): void {
    if (this.finished) return;
    const step = task.spec.steps[stepIndex]!;
    const policy = this.currentPolicy();
    const a: Attempt = {
      promptTokens: step.inputTokens,
      outputTokens: step.outputTokens,
      prefix: step.prefix,
      phase: 'new',
      arriveMs: -1,
      admitMs: -1,
      firstTokenMs: -1,
      lastTokenMs: -1,
      generated: 0,
      prefillRemaining: 0,
      chunk: 0,
      cachedTokens: 0,
      kvTokens: 0,
      failAtToken: -1,
      failErrorType: '',
      preemptions: 0,
      queueDepthAtArrival: 0,
      kvUsageAtAdmission: 0,
      batchSizeAtAdmission: 0,
      aborted: false,
      serial: this.attemptSerial++,
      task,
      stepIndex,
      attemptNo,
      model: task.model,
      policy,
      startMs: this.nowMs,
      gatewayEndMs: -1,
      routeEndMs: -1,
      cacheEndMs: -1,
      routedCachedTokens: 0,
      pool: null,
      replica: null,
      replicaEndMs: -1,
      endMs: -1,
      outcome: null,
      errorType: null,
      statusCode: 0,
      upstreamStatusCode: 0,
      done: false,
    };
    this.live.add(a);
    const isRetry = attemptNo > 1;
    const gatewayMs = this.fleetRng.logNormal(1.2, 0.3);
    a.gatewayEndMs = this.nowMs + gatewayMs;

    // Gateway admission: shed new tasks below the priority floor; enforce the gateway retry budget.
    const minPriority = this.minPriorityByModel.get(a.model) ?? this.minPriorityByModel.get('*');
    if (minPriority !== undefined && stepIndex === 0 && task.spec.priority < minPriority) {
      this.finishAttempt(a, a.gatewayEndMs, 'rejected', 'load_shed', 429);
      return;
    }
    if (isRetry && this.retryBudgetRatio !== null && !this.isWithinRetryBudget(this.retryBudgetRatio)) {
      this.finishAttempt(a, a.gatewayEndMs, 'rejected', 'retry_budget_exceeded', 429);
      return;
    }
    this.countRetryWindow(isRetry);

    // Router: pick a pool by weight among healthy ones, then a replica by EPP-style scoring.
    const routeMs = this.fleetRng.logNormal(0.8, 0.3);
    a.routeEndMs = a.gatewayEndMs + routeMs;
    const routed = this.route(a);
    if (typeof routed === 'string') {
      this.finishAttempt(a, a.routeEndMs, 'rejected', routed, routed === 'model_not_found' ? 404 : 503);
      return;
    }
    a.pool = routed.pool;
    a.replica = routed.replica;
    a.routedCachedTokens = routed.cachedTokens;
    const blocks = a.prefix ? countPrefixBlocks(a.prefix) : 0;
    a.cacheEndMs = a.routeEndMs + this.fleetRng.logNormal(0.4, 0.3) + blocks * 0.0005;
    this.push(a.cacheEndMs + NETWORK_HOP_MS, { k: 'arrive', attempt: a });
    this.push(this.nowMs + policy.timeoutMs, { k: 'timeout', attempt: a });
  }

  private route(a: Attempt): { pool: PoolRun; replica: Replica; cachedTokens: number } | string {
    const serving = this.pools.filter((p) => p.spec.model === a.model);
    if (serving.length === 0) return 'model_not_found';
    const healthy = serving.filter(
      (p) =>
        !p.breakerOpen &&
        !this.regionsDown.has(p.spec.region) &&
        p.replicas.some((r) => r.status === 'running'),
    );
    if (healthy.length === 0) return serving.every((p) => p.breakerOpen) ? 'circuit_open' : 'no_capacity';
    const weighted = healthy.filter((p) => p.weight > 0);
    const candidates = weighted.length > 0 ? weighted : healthy;
    const total = candidates.reduce((sum, p) => sum + (weighted.length > 0 ? p.weight : 1), 0);
    // Weighted split hashed on the task (like a session-affinity route), so a workflow's steps
    // stay on one pool and keep their prefix cache while weights are unchanged.
    let x = hashUniform(this.config.seed, a.task.serial, 0x9001) * total;
    let pool = candidates[candidates.length - 1]!;
    for (const p of candidates) {
      x -= weighted.length > 0 ? p.weight : 1;
      if (x < 0) {
        pool = p;
        break;
      }
    }
    return this.pickReplica(pool, a);
  }

  /** llm-d EPP default scorers: prefix-cache (weight 3), KV utilization (2), queue depth (2). */
  private pickReplica(pool: PoolRun, a: Attempt): { pool: PoolRun; replica: Replica; cachedTokens: number } {
    const running = pool.replicas.filter((r) => r.status === 'running');
    let minQueue = Number.POSITIVE_INFINITY;
    let maxQueue = 0;
    for (const r of running) {
      minQueue = Math.min(minQueue, r.waitingCount);
      maxQueue = Math.max(maxQueue, r.waitingCount);
    }
    const totalBlocks = a.prefix ? countPrefixBlocks(a.prefix) : 0;
    let best = running[0]!;
    let bestScore = Number.NEGATIVE_INFINITY;
    let bestMatched = 0;
    for (const r of running) {
      syncReplica(r, this.nowMs);
      const matched = a.prefix && totalBlocks > 0 ? r.cache.matchBlocks(a.prefix) : 0;
      const prefixScore = totalBlocks > 0 ? matched / totalBlocks : 0;
      const queueScore = maxQueue > minQueue ? 1 - (r.waitingCount - minQueue) / (maxQueue - minQueue) : 1;
      const score = 3 * prefixScore + 2 * (1 - getKvUsage(r)) + 2 * queueScore;
      if (score > bestScore) {
        bestScore = score;
        best = r;
        bestMatched = matched;
      }
    }
    return {
      pool,
      replica: best,
      cachedTokens: Math.min(bestMatched * PREFIX_BLOCK_TOKENS, a.promptTokens - 1),
    };
  }

  private onArrive(a: Attempt): void {
    if (a.done) return;
    const replica = a.replica!;
    const pool = a.pool!;
    if (!pool.replicas.includes(replica)) {
      this.finishAttempt(a, this.nowMs + ERROR_RESPONSE_MS, 'error', 'upstream_connect_error', 503);
      return;
    }
    enqueueSeq(this.host, replica, a, this.nowMs);
  }

  private onTimeout(a: Attempt): void {
    if (a.done) return;
    if (a.replica && (a.phase === 'waiting' || a.phase === 'prefill' || a.phase === 'decode')) {
      abortSeq(this.host, a.replica, a, this.nowMs);
      a.replicaEndMs = this.nowMs;
      if (a.generated > 0) a.lastTokenMs = this.nowMs;
    }
    this.finishAttempt(a, this.nowMs, 'timeout', 'timeout', 504);
  }

  private injectFailure(replica: Replica, seq: RuntimeSeq): void {
    const pool = this.poolsByName.get(replica.poolName);
    if (!pool || pool.errorRate <= 0) return;
    if (!this.fleetRng.chance(pool.errorRate)) return;
    seq.failAtToken = this.fleetRng.int(seq.outputTokens);
    seq.failErrorType = pool.errorRate > BASE_ERROR_RATE ? 'gpu_error' : 'internal_error';
  }

  private onReplicaFinished(replica: Replica, a: Attempt, atMs: number, errorType: string | null): void {
    a.replicaEndMs = atMs;
    // A prompt longer than the KV cache is refused by vLLM's API server before the engine sees it.
    if (errorType !== 'context_length_exceeded')
      recordFinishedRequest(replica, a, atMs, errorType === null ? 'stop' : 'error');
    a.upstreamStatusCode = errorType === null ? 200 : errorType === 'context_length_exceeded' ? 400 : 500;
    if (errorType === null) {
      this.finishAttempt(a, atMs + STREAM_END_MS, 'success', null, 200);
    } else {
      this.finishAttempt(
        a,
        atMs + ERROR_RESPONSE_MS,
        'error',
        errorType,
        errorType === 'context_length_exceeded' ? 400 : 500,
      );
    }
  }

  private finishAttempt(
    a: Attempt,
    endMs: number,
    outcome: Outcome,
    errorType: string | null,
    statusCode: number,
  ): void {
    if (a.done) return;
    a.done = true;
    a.endMs = endMs;
    a.outcome = outcome;
    a.errorType = errorType;
    a.statusCode = statusCode;
    this.live.delete(a);
    this.recordAttempt(a);
    this.config.sink?.onAttemptFinished(a);
    if (outcome === 'success') {
      this.finalizeStep(a, true);
      return;
    }
    if (outcome === 'cancelled' || this.finished) {
      a.task.incomplete = true;
      this.finalizeStep(a, false);
      return;
    }
    const policy = a.policy;
    const retryable = !NON_RETRYABLE.has(errorType ?? '');
    const budgetOk = policy.budgetRatio === null || this.isWithinRetryBudget(policy.budgetRatio);
    if (retryable && a.attemptNo < policy.maxAttempts && budgetOk) {
      const backoff = Math.min(policy.backoffMaxMs, policy.backoffBaseMs * 2 ** (a.attemptNo - 1));
      const jittered = backoff * (1 + policy.jitter * (2 * this.clientRng.next() - 1));
      this.push(endMs + jittered, {
        k: 'attempt',
        task: a.task,
        step: a.stepIndex,
        attemptNo: a.attemptNo + 1,
      });
      return;
    }
    this.finalizeStep(a, false);
  }

  private recordAttempt(a: Attempt): void {
    this.requests += 1;
    this.outcomes[a.outcome!] += 1;
    if (a.attemptNo > 1) this.retries += 1;
    const e2e = a.endMs - a.startMs;
    this.e2eMs.push(e2e);
    const ttft = a.firstTokenMs >= 0 ? a.firstTokenMs - a.startMs : -1;
    if (ttft >= 0) this.ttftMs.push(ttft);
    const pool = a.pool;
    if (pool) {
      for (const fault of this.config.faults) {
        if (
          fault.target.pool === pool.spec.name &&
          a.endMs >= fault.startMs &&
          !this.faultFirstRequestMs.has(fault)
        )
          this.faultFirstRequestMs.set(fault, a.endMs);
      }
      const s = pool.stats;
      s.requests += 1;
      if (a.outcome === 'error' || a.outcome === 'timeout' || a.outcome === 'preempted') s.errors += 1;
      s.e2eMs.push(e2e);
      if (ttft >= 0) s.ttftMs.push(ttft);
      if (a.admitMs >= 0) {
        s.queueMs.push(a.admitMs - a.arriveMs);
        s.promptTokens += a.promptTokens;
        s.cachedTokens += a.cachedTokens;
      }
    }
  }

  private finalizeStep(a: Attempt, success: boolean): void {
    const task = a.task;
    if (task.done) return;
    task.stepsFinal += 1;
    if (!success) task.failed = true;
    else if (
      a.firstTokenMs - a.startMs > this.config.sloTtftMs ||
      a.endMs - a.startMs > this.config.sloE2eMs
    ) {
      task.sloOk = false;
    }
    const steps = task.spec.steps;
    if (task.spec.openLoop) {
      if (task.stepsFinal === steps.length) this.completeTask(task);
      return;
    }
    if (!success || a.stepIndex === steps.length - 1) {
      this.completeTask(task);
      return;
    }
    if (this.finished) return;
    const next = a.stepIndex + 1;
    this.push(a.endMs + steps[next]!.thinkMs, { k: 'step', task, step: next });
  }

  private completeTask(task: TaskRun): void {
    if (task.done) return;
    task.done = true;
    task.endMs = this.nowMs;
    this.openTasks -= 1;
    this.tasksDone += 1;
    if (!task.failed) {
      this.tasksSucceeded += 1;
      if (task.sloOk) this.tasksWithinSlo += 1;
    }
    const next = task.spec.next;
    if (next && !this.finished && this.nowMs + next.startMs < this.config.durationMs) {
      this.push(this.nowMs + next.startMs, { k: 'task', spec: next });
    }
    if (this.arrivalsClosed && this.openTasks === 0 && !this.finished) this.finish();
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.simEndMs = this.nowMs;
    for (const a of [...this.live]) {
      if (a.replica && a.generated > 0 && a.lastTokenMs < 0) a.lastTokenMs = this.nowMs;
      this.finishAttempt(a, this.nowMs, 'cancelled', 'run_ended', 499);
    }
    for (const task of this.tasks) if (!task.done) task.incomplete = true;
    this.tasksIncomplete = this.tasks.filter((t) => t.incomplete).length;
    for (const pool of this.pools) this.updatePaid(pool, this.nowMs);
  }

  // ---- fleet: replicas, scaling, faults ------------------------------------------------------

  private updatePaid(pool: PoolRun, atMs: number): void {
    pool.paidIntegralMs += pool.paidCount * (atMs - pool.lastPaidChangeMs);
    pool.lastPaidChangeMs = atMs;
    pool.paidCount = pool.replicas.length;
    pool.paidMax = Math.max(pool.paidMax, pool.paidCount);
  }

  private removeReplica(replica: Replica, atMs: number): void {
    const pool = this.poolsByName.get(replica.poolName)!;
    const index = pool.replicas.indexOf(replica);
    if (index < 0) return;
    replica.version += 1;
    pool.replicas.splice(index, 1);
    this.utilMarks.delete(replica);
    this.gpuMarks.delete(replica);
    this.processStartMs.delete(replica);
    this.placement.release(replica);
    this.updatePaid(pool, atMs);
  }

  private onReplicaReady(replica: Replica): void {
    const pool = this.poolsByName.get(replica.poolName)!;
    if (replica.status !== 'starting' || !pool.replicas.includes(replica)) return;
    replica.status = 'running';
    replica.readyMs = this.nowMs;
    if (pool.warmupMs > 0) {
      replica.warmUntilMs = this.nowMs + pool.warmupMs;
      replica.warmSlowdown = pool.warmSlowdown;
    }
    kickReplica(this.host, replica, this.nowMs);
  }

  /** Brings a pool's replica set to its desired count: un-drain, start cold replicas, or drain. */
  private reconcile(pool: PoolRun): void {
    if (this.regionsDown.has(pool.spec.region) || this.finished) return;
    const active = () => pool.replicas.filter((r) => r.status !== 'draining');
    while (active().length < pool.desired) {
      const draining = pool.replicas.find((r) => r.status === 'draining');
      if (draining) {
        draining.status = 'running';
        continue;
      }
      const replica = createReplica(
        this.nextReplicaId(pool),
        pool.spec.name,
        pool.spec,
        'starting',
        this.nowMs,
      );
      pool.replicas.push(replica);
      this.onReplicaAdded(replica);
      this.push(this.nowMs + pool.spec.coldStartMs * pool.coldStartFactor, { k: 'ready', replica });
    }
    while (active().length > pool.desired) {
      const candidates = active();
      const starting = candidates.filter((r) => r.status === 'starting');
      if (starting.length > 0) {
        this.removeReplica(starting[starting.length - 1]!, this.nowMs);
        continue;
      }
      // Drain the least loaded running replica; it keeps serving what it holds, then goes away.
      let victim = candidates[0]!;
      for (const r of candidates) {
        if (r.running.length + r.waitingCount < victim.running.length + victim.waitingCount) victim = r;
      }
      victim.status = 'draining';
      if (victim.running.length === 0 && victim.waitingCount === 0) this.removeReplica(victim, this.nowMs);
    }
    this.updatePaid(pool, this.nowMs);
  }

  /** Sets a pool's desired replica count; returns false for an unknown pool. Counts reversals. */
  scalePool(poolName: string, replicas: number, source: string): boolean {
    const pool = this.poolsByName.get(poolName);
    if (!pool) return false;
    const target = Math.max(0, Math.min(pool.spec.maxReplicas, Math.round(replicas)));
    const direction = Math.sign(target - pool.desired);
    if (direction !== 0) {
      // A reversal is the policy undoing its own scaling; a fault's replica changes are the world's.
      if (!source.startsWith('fault:')) {
        const last = pool.lastScale;
        if (last && last.direction === -direction && this.nowMs - last.atMs <= this.config.reversalWindowMs)
          this.reversals += 1;
        pool.lastScale = { direction, atMs: this.nowMs };
      }
      this.actionLog.push({
        atMs: this.nowMs,
        source,
        kind: 'scale',
        detail: `${poolName} ${pool.desired}→${target}`,
      });
    }
    pool.desired = target;
    this.reconcile(pool);
    return true;
  }

  countAction(source: string, kind: string, detail: string): void {
    this.actions += 1;
    if (kind !== 'scale') this.actionLog.push({ atMs: this.nowMs, source, kind, detail });
  }

  setBreaker(poolName: string, open: boolean, durationS: number | undefined): boolean {
    const pool = this.poolsByName.get(poolName);
    if (!pool) return false;
    pool.breakerOpen = open;
    pool.breakerToken += 1;
    pool.breakerUntilMs = null;
    if (open && durationS !== undefined && durationS > 0) {
      pool.breakerUntilMs = this.nowMs + durationS * 1000;
      this.push(pool.breakerUntilMs, { k: 'breaker', pool, token: pool.breakerToken });
    }
    return true;
  }

  private killReplica(replica: Replica, reason: 'preempted' | 'crashed' | 'region_unavailable'): void {
    const seqs = evictAll(replica, this.nowMs);
    this.removeReplica(replica, this.nowMs);
    for (const seq of seqs) {
      const a = seq as Attempt;
      if (a.done) continue;
      a.replicaEndMs = this.nowMs;
      if (a.generated > 0) a.lastTokenMs = this.nowMs;
      if (reason === 'preempted' && a.generated > 0) {
        this.finishAttempt(a, this.nowMs + ERROR_RESPONSE_MS, 'preempted', 'preempted', 500);
      } else {
        const type =
          reason === 'preempted' ? 'replica_preempted' : reason === 'crashed' ? 'replica_crashed' : reason;
        this.finishAttempt(a, this.nowMs + ERROR_RESPONSE_MS, 'error', type, 502);
      }
    }
  }

  private startFault(fault: FaultSpec): void {
    const pool = fault.target.pool ? this.poolsByName.get(fault.target.pool) : undefined;
    switch (fault.kind) {
      case 'gpu-degradation':
        if (!pool) return;
        pool.slowdown = fault.params.slowdown ?? FAULT_PARAMS.gpuDegradation.slowdown;
        pool.errorRate = fault.params.errorRate ?? FAULT_PARAMS.gpuDegradation.errorRate;
        for (const r of pool.replicas) wakeReplica(this.host, r, this.nowMs);
        return;
      case 'preemption':
        this.preemptOne(fault);
        return;
      case 'retry-storm':
      case 'retry-storm-budget': {
        const p = FAULT_PARAMS.retryStorm;
        this.stormPolicy = {
          maxAttempts: fault.params.maxAttempts ?? p.maxAttempts,
          timeoutMs: fault.params.timeoutMs ?? p.timeoutMs,
          backoffBaseMs: fault.params.backoffMs ?? p.backoffMs,
          backoffMaxMs: 1000,
          jitter: 0,
          budgetRatio:
            fault.kind === 'retry-storm-budget' ? (fault.params.budgetRatio ?? p.budgetRatio) : null,
        };
        if (!pool) return;
        // The trigger: half the pool's replicas crash at once and are replaced cold.
        const running = pool.replicas.filter((r) => r.status === 'running');
        const count = Math.ceil(running.length * (fault.params.crashShare ?? p.crashShare));
        for (const r of running.slice(0, count)) this.killReplica(r, 'crashed');
        this.reconcile(pool);
        return;
      }
      case 'region-outage': {
        const region = fault.target.region!;
        this.regionsDown.add(region);
        for (const p of this.pools.filter((q) => q.spec.region === region)) {
          for (const r of [...p.replicas]) this.killReplica(r, 'region_unavailable');
          this.updatePaid(p, this.nowMs);
        }
        return;
      }
      case 'cold-pool':
        if (!pool) return;
        pool.coldStartFactor = fault.params.coldStartFactor ?? FAULT_PARAMS.coldPool.coldStartFactor;
        pool.warmupMs = fault.params.warmupMs ?? FAULT_PARAMS.coldPool.warmupMs;
        pool.warmSlowdown = fault.params.warmSlowdown ?? FAULT_PARAMS.coldPool.warmSlowdown;
        this.scalePool(pool.spec.name, pool.desired + (fault.params.addReplicas ?? 2), 'fault:cold-pool');
        return;
      case 'agentic-surge':
        return;
    }
  }

  private endFault(fault: FaultSpec): void {
    const pool = fault.target.pool ? this.poolsByName.get(fault.target.pool) : undefined;
    switch (fault.kind) {
      case 'gpu-degradation':
        if (!pool) return;
        pool.slowdown = 1;
        pool.errorRate = BASE_ERROR_RATE;
        for (const r of pool.replicas) wakeReplica(this.host, r, this.nowMs);
        return;
      case 'retry-storm':
      case 'retry-storm-budget':
        this.stormPolicy = null;
        return;
      case 'region-outage': {
        this.regionsDown.delete(fault.target.region!);
        for (const p of this.pools.filter((q) => q.spec.region === fault.target.region)) this.reconcile(p);
        return;
      }
      case 'cold-pool':
        if (!pool) return;
        pool.coldStartFactor = 1;
        pool.warmupMs = 0;
        pool.warmSlowdown = 1;
        return;
      default:
        return;
    }
  }

  /** Spot reclaim: the running replica with the most active streams dies; a cold replacement starts. */
  private preemptOne(fault: FaultSpec): void {
    if (this.nowMs >= fault.endMs) return;
    const pool = fault.target.pool ? this.poolsByName.get(fault.target.pool) : undefined;
    if (!pool) return;
    const running = pool.replicas.filter((r) => r.status === 'running');
    if (running.length > 0) {
      let victim = running[0]!;
      for (const r of running) if (r.running.length > victim.running.length) victim = r;
      this.killReplica(victim, 'preempted');
      this.reconcile(pool);
    }
    const everyMs = fault.params.everyMs ?? FAULT_PARAMS.preemption.everyMs;
    if (this.nowMs + everyMs < fault.endMs) this.push(this.nowMs + everyMs, { k: 'preempt', fault });
  }

  // ---- gauges and autoscalers ----------------------------------------------------------------

  observePools(): PoolObservation[] {
    return this.pools.map((pool) => {
      const replicas = pool.replicas.filter((r) => r.status !== 'starting');
      for (const r of replicas) syncReplica(r, this.nowMs);
      return {
        name: pool.spec.name,
        spec: pool.spec,
        desired: pool.desired,
        ready: pool.replicas.filter((r) => r.status === 'running').length,
        starting: pool.replicas.filter((r) => r.status === 'starting').length,
        replicas: pool.replicas
          .filter((r) => r.status === 'running')
          .map((r) => ({
            id: r.id,
            kvUsage: getKvUsage(r),
            waiting: r.waitingCount,
            running: r.running.length,
            busyMs: getBusyMs(r, this.nowMs),
            readyMs: r.readyMs,
          })),
      };
    });
  }

  private runAutoscaler(): void {
    const autoscaler = this.config.autoscaler!;
    this.push(this.nowMs + autoscaler.intervalMs, { k: 'autoscale' }, PRIORITY.autoscale);
    if (this.finished) return;
    for (const decision of autoscaler.decide(this.nowMs, this.observePools())) {
      const pool = this.poolsByName.get(decision.pool);
      if (!pool || pool.desired === decision.replicas) continue;
      this.countAction(autoscaler.name, 'scale', `${decision.pool} ${pool.desired}→${decision.replicas}`);
      this.scalePool(decision.pool, decision.replicas, autoscaler.name);
    }
  }

  /** Samples the gauges; GPU utilization is the share of the interval with a non-empty batch. */
  sampleMetrics(): MetricsSample {
    const sample: MetricsSample = { timeMs: this.nowMs, pools: [], replicas: [] };
    for (const pool of this.pools) {
      sample.pools.push({ pool: pool.spec.name, paidReplicas: pool.replicas.length });
      for (const r of pool.replicas) {
        syncReplica(r, this.nowMs);
        const busy = getBusyMs(r, this.nowMs);
        const mark = this.utilMarks.get(r) ?? { busyMs: 0, atMs: this.nowMs };
        const spanMs = r.status === 'starting' ? 0 : this.nowMs - Math.max(mark.atMs, r.readyMs);
        const util = spanMs > 0 ? Math.min(100, (100 * (busy - mark.busyMs)) / spanMs) : 0;
        this.utilMarks.set(r, { busyMs: busy, atMs: this.nowMs });
        sample.replicas.push({
          pool: pool.spec.name,
          replica: r.id,
          status: r.status,
          kvUsage: getKvUsage(r),
          waiting: r.waitingCount,
          running: r.running.length,
          gpuUtilPct: r.status === 'starting' ? 0 : util,
          readyMs: r.readyMs,
          counters: copyEngineCounters(r.counters),
        });
      }
    }
    return sample;
  }

  /** One scrape of a vLLM pod's /metrics; a removed pod is no longer a target. */
  private scrapeReplica(replica: Replica): void {
    const pool = this.poolsByName.get(replica.poolName)!;
    if (!pool.replicas.includes(replica)) return;
    this.push(this.nowMs + this.config.scrapeIntervalMs!, { k: 'scrape', replica }, PRIORITY.metrics);
    syncReplica(replica, this.nowMs);
    this.config.sink?.onScrape?.({
      kind: 'runtime',
      timeMs: this.nowMs,
      pool: pool.spec.name,
      model: pool.spec.model,
      replica: replica.id,
      podIndex: podIndexOf(replica),
      nodeIndex: replica.nodeIndex,
      gpuType: replica.spec.gpuType,
      region: replica.spec.region,
      status: replica.status,
      processStartMs: this.processStartMs.get(replica) ?? replica.createdMs,
      kvUsage: getKvUsage(replica),
      waiting: replica.waitingCount,
      running: replica.running.length,
      counters: copyEngineCounters(replica.counters),
    });
  }

  /** One scrape of a node's DCGM exporter: every GPU, busy share since the node's previous scrape. */
  private scrapeNode(node: GpuNode): void {
    this.push(this.nowMs + this.config.scrapeIntervalMs!, { k: 'nodeScrape', node }, PRIORITY.metrics);
    const seen = new Map<Replica, Omit<GpuScrape, 'gpu'>>();
    const gpus: GpuScrape[] = node.slots.map((replica, gpu) => {
      if (!replica) return { gpu, holder: null, utilPct: 0, prefillShare: 0, memoryUsedShare: 0 };
      const known = seen.get(replica);
      if (known) return { gpu, ...known };
      const reading = this.readGpu(replica);
      seen.set(replica, reading);
      return { gpu, ...reading };
    });
    this.config.sink?.onScrape?.({
      kind: 'gpu-node',
      timeMs: this.nowMs,
      nodeIndex: node.index,
      gpuType: node.gpuType,
      region: node.region,
      gpus,
    });
  }

  private readGpu(replica: Replica): Omit<GpuScrape, 'gpu'> {
    const pool = this.poolsByName.get(replica.poolName)!;
    const holder = {
      pool: pool.spec.name,
      replica: replica.id,
      podIndex: podIndexOf(replica),
      status: replica.status,
    };
    if (replica.status === 'starting') {
      // Loading weights: memory fills over the cold start; no kernels run yet.
      const coldMs = pool.spec.coldStartMs * pool.coldStartFactor;
      const progress = coldMs > 0 ? Math.min(1, (this.nowMs - replica.createdMs) / coldMs) : 1;
      return { holder, utilPct: 0, prefillShare: 0, memoryUsedShare: VLLM_GPU_MEMORY_SHARE * progress };
    }
    syncReplica(replica, this.nowMs);
    const c = replica.counters;
    const busy = getBusyMs(replica, this.nowMs);
    const now = {
      busyMs: busy,
      atMs: this.nowMs,
      promptTokens: c.promptTokens,
      generationTokens: c.generationTokens,
      iterations: c.iterations,
    };
    const mark = this.gpuMarks.get(replica) ?? {
      busyMs: 0,
      atMs: replica.readyMs,
      promptTokens: 0,
      generationTokens: 0,
      iterations: 0,
    };
    this.gpuMarks.set(replica, now);
    const spanMs = this.nowMs - Math.max(mark.atMs, replica.readyMs);
    const utilPct = spanMs > 0 ? Math.min(100, (100 * (busy - mark.busyMs)) / spanMs) : 0;
    const model = replica.spec.stepModel;
    const prefillWork = (c.promptTokens - mark.promptTokens) * model.prefillPerTokenMs;
    const decodeWork =
      (c.generationTokens - mark.generationTokens) * model.decodePerSeqMs +
      (c.iterations - mark.iterations) * model.baseMs;
    const prefillShare = prefillWork + decodeWork > 0 ? prefillWork / (prefillWork + decodeWork) : 0;
    return { holder, utilPct, prefillShare, memoryUsedShare: VLLM_GPU_MEMORY_SHARE };
  }

  private emitMetrics(): void {
    const sample = this.sampleMetrics();
    this.config.sink?.onMetricsSample(sample);
  }
}

/** The replica's index within its pool (ids are `<pool>-<index>`): the pod's stable identity. */
function podIndexOf(replica: Replica): number {
  return Number(replica.id.slice(replica.id.lastIndexOf('-') + 1));
}
