import { createHash, randomUUID } from 'node:crypto';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import type {
  ControlAction,
  GovernorConfig,
  PolicyConfig,
  Recommendation,
  RecommendationState,
} from '@governor/conventions';
import { maxAcceptedEventNs, parseDurationMs } from '@governor/conventions';
import {
  createDeliveryQueue,
  type DeliveryOutcome,
  type QueuedActuator,
} from '../actuators/create-delivery-queue.ts';
import type { DetectContext } from '../detectors/detect-context.ts';
import { assessPoolAgainstPeers } from '../detectors/detect-pool-outliers.ts';
import { readScaleReadiness } from '../detectors/detect-scale.ts';
import { minJudgedRequests, summarizeScope } from '../detectors/pool-signals.ts';
import { type FleetObservation, observeFleet } from '../observe-fleet.ts';
import type {
  EngineWorkReader,
  PrefillSpeedReader,
  RequestArrivalsReader,
  SignalsReader,
} from '@governor/signals';
import type { ControlRepository } from '../state/control-repository.ts';
import { formatTargetKey, parseTargetKey } from '../target-key.ts';
import { nsToIso, secondsToNs } from '../time.ts';
import { applyToActuated, describePrevious } from './apply-to-actuated.ts';
import {
  type AuditDecision,
  type AuditEntry,
  type Candidate,
  type ControlState,
  createEmptyState,
  type RecommendationRecord,
  type ScopeMetrics,
} from './control-types.ts';
import { type ControlTuning, DEFAULT_TUNING } from './control-tuning.ts';
import { gateCandidate } from './gate-candidate.ts';
import { judgeVerification } from './judge-verification.ts';
import { runDetectors } from './run-detectors.ts';
import { type AuditView, stableJson, toAuditView, toRecommendation } from './to-api.ts';
import { updateLearning } from './update-learning.ts';

export interface ControlEvent {
  type:
    | 'recommendation.created'
    | 'recommendation.updated'
    | 'control.action'
    | 'control.delivery'
    | 'control.tick';
  data: unknown;
}

export interface ControlEngineOptions {
  config: GovernorConfig;
  signals: SignalsReader;
  repository: ControlRepository;
  /** Ready replicas per pool (see createReadyReplicasReader); without it, cold starts are waited out by time. */
  readReadyReplicas?: (atNs: bigint) => Promise<Map<string, number>>;
  /** Prefill ms per prompt token per pool (see createPrefillSpeedReader): tells contention from prompt mix. */
  readPrefillSpeed?: PrefillSpeedReader;
  /** Engine work per pool from runtime counters (see createEngineWorkReader): catches a slow GPU within a window. */
  readEngineWork?: EngineWorkReader;
  /** Each pool's recent requests (see createRequestArrivalsReader): replayed to check a scale-in holds the SLO. */
  readRequestArrivals?: RequestArrivalsReader;
  actuators?: readonly QueuedActuator[];
  onEvent?: (event: ControlEvent) => void;
  onError?: (error: unknown) => void;
  /** Wall clock (ms) for audit timestamps and human actions before the first tick. */
  now?: () => number;
  tuning?: Partial<ControlTuning>;
  /** How often the watermark ticker looks for a new interval boundary (wall ms). */
  tickPollMs?: number;
  deliverySleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

export interface EvaluateResult {
  at: string;
  recommendations: Recommendation[];
  actions: ControlAction[];
}

export type ControlFailure =
  | { ok: false; code: 'not_found'; message: string }
  | { ok: false; code: 'invalid_transition'; message: string }
  | { ok: false; code: 'disabled'; message: string }
  | { ok: false; code: 'time_reversed'; message: string }
  | { ok: false; code: 'time_ahead'; message: string };

export type ControlResult<T> = ({ ok: true } & T) | ControlFailure;

export interface PoliciesView {
  policies: PolicyConfig[];
  source: 'config' | 'api';
  updatedBy: string | null;
  updatedAt: string | null;
}

export interface ControlEngine {
  /** One control tick at event time `atNs` (default: the watermark). dryRun changes and sends nothing. */
  evaluate(options?: { atNs?: bigint; dryRun?: boolean }): Promise<ControlResult<{ result: EvaluateResult }>>;
  listRecommendations(filter: { states?: RecommendationState[]; limit?: number }): Promise<Recommendation[]>;
  getRecommendation(id: string): Promise<Recommendation | null>;
  approve(
    id: string,
    actor: string,
    note?: string,
  ): Promise<ControlResult<{ recommendation: Recommendation }>>;
  reject(
    id: string,
    actor: string,
    note?: string,
  ): Promise<ControlResult<{ recommendation: Recommendation }>>;
  apply(
    id: string,
    actor: string,
    note?: string,
  ): Promise<ControlResult<{ recommendation: Recommendation; action: ControlAction }>>;
  listAudit(filter: { recommendationId?: string; limit?: number }): Promise<AuditView[]>;
  getPolicies(): PoliciesView;
  setPolicies(policies: PolicyConfig[], actor: string): Promise<PoliciesView>;
  /** Replicas Governor wants per pool (its last scale decision, else what the pool reports): for KEDA/HPA. */
  desiredReplicas(): Record<string, number>;
  /** Runs ticks for every interval boundary the watermark has passed since the last tick. */
  tickToWatermark(): Promise<number>;
  /** Starts the watermark ticker when control.tick is `watermark`. */
  start(): void;
  /** Deliveries still queued or in flight. */
  pendingDeliveries(): number;
  drainDeliveries(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

interface TickOutput {
  touched: Map<string, RecommendationRecord>;
  audit: AuditEntry[];
  actions: ControlAction[];
  events: ControlEvent[];
}

const OPEN_STATES: readonly RecommendationState[] = ['proposed', 'approved'];

export async function createControlEngine(options: ControlEngineOptions): Promise<ControlEngine> {
  const { config, signals, repository } = options;
  const control = config.control;
  const tuning: ControlTuning = { ...DEFAULT_TUNING, ...options.tuning };
  const now = options.now ?? Date.now;
  const emit = options.onEvent ?? (() => {});
  const reportError = options.onError ?? (() => {});
  const windowMs = parseDurationMs(control.window);
  const intervalMs = control.interval_s * 1000;
  // Short enough to see a fault within two ticks, long enough for a usable sample.
  const fastWindowMs = Math.min(windowMs, Math.max(intervalMs, 30_000));
  const cooldownNs = secondsToNs(control.cooldown_s);
  const ttlNs = secondsToNs(control.recommendation_ttl_s);
  const configHash = createHash('sha256').update(JSON.stringify(config.policies)).digest('hex');

  const state: ControlState = createEmptyState();
  let policies: PolicyConfig[] = config.policies;
  let policySource: PoliciesView = { policies, source: 'config', updatedBy: null, updatedAt: null };
  let lastObservation: FleetObservation | null = null;
  let chain: Promise<unknown> = Promise.resolve();
  let ticker: NodeJS.Timeout | null = null;
  let polling: Promise<number> | null = null;
  let closed = false;
  // Audit writes of delivery outcomes; close waits for them so none lands on a closed store.
  const recordings = new Set<Promise<void>>();

  const serialize = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = chain.then(fn);
    chain = run.catch(() => undefined);
    return run;
  };

  const deliveries = createDeliveryQueue({
    actuators: options.actuators ?? [],
    sleep: options.deliverySleep,
    onOutcome: (outcome, action) => {
      const recording = recordDelivery(outcome, action).finally(() => recordings.delete(recording));
      recordings.add(recording);
    },
  });

  // ---- restore after a restart ---------------------------------------------------------------
  const stored = await repository.loadPolicies();
  if (stored && stored.configHash === configHash) {
    policies = stored.policies;
    policySource = {
      policies,
      source: 'api',
      updatedBy: stored.updatedBy,
      updatedAt: new Date(stored.updatedAtMs).toISOString(),
    };
  }
  for (const rec of await repository.loadActive()) {
    if (rec.appliedNs !== null) {
      applyToActuated(state.actuated, rec.kind, rec.target, rec.action, rec.appliedNs, undefined, rec.cause);
      remember(state, rec, rec.direction, rec.appliedNs);
      if (rec.state === 'rolled_back' && rec.previousAction && rec.verifiedNs !== null) {
        applyToActuated(
          state.actuated,
          rec.kind,
          rec.target,
          rec.previousAction,
          rec.verifiedNs,
          undefined,
          rec.cause,
        );
        remember(state, rec, rec.direction === 'increase' ? 'decrease' : 'increase', rec.verifiedNs);
      }
      if (rec.policy && (rec.gate ?? '').startsWith('auto-applied')) {
        const list = state.autoApplied.get(rec.policy) ?? [];
        list.push(rec.appliedNs);
        state.autoApplied.set(rec.policy, list);
      }
    }
    if (rec.state === 'proposed' || rec.state === 'approved' || rec.state === 'applied')
      state.open.set(rec.id, rec);
    if (state.lastTickNs === null || rec.updatedNs > state.lastTickNs) state.lastTickNs = rec.updatedNs;
  }
  // A tick past the event-time bound (a store poisoned before the bound existed) would refuse
  // every real tick after it as time reversed: start over from the watermark instead.
  if (state.lastTickNs !== null && state.lastTickNs > maxTickNs()) state.lastTickNs = null;

  /** No tick runs past the server clock + ingest.max_future_skew, the bound intake holds events to. */
  function maxTickNs(): bigint {
    return maxAcceptedEventNs(config.ingest, BigInt(Math.trunc(now())) * 1_000_000n);
  }

  // ---- helpers ---------------------------------------------------------------------------------
  function remember(
    s: ControlState,
    rec: RecommendationRecord,
    direction: 'increase' | 'decrease',
    atNs: bigint,
  ) {
    const step =
      rec.kind === 'scale' ? (direction === rec.direction ? rec.action : rec.previousAction) : null;
    const to = Number(step?.to);
    const from = Number(step?.from);
    s.memory.set(`${rec.kind}|${rec.targetKey}`, {
      direction,
      appliedNs: atNs,
      recommendationId: rec.id,
      expectReplicas: Number.isFinite(to) ? to : null,
      ...(Number.isFinite(from) ? { fromReplicas: from } : {}),
    });
  }

  function audit(
    out: TickOutput,
    atNs: bigint,
    decision: AuditDecision,
    actor: string,
    rec: RecommendationRecord | null,
    reason: string,
    result: string,
    details: Record<string, unknown> = {},
    actionId: string | null = null,
  ) {
    out.audit.push({
      id: randomUUID(),
      atNs,
      recordedAtMs: now(),
      recommendationId: rec?.id ?? null,
      actionId: actionId ?? rec?.actionId ?? null,
      kind: rec?.kind ?? null,
      target: rec?.target ?? null,
      decision,
      actor,
      reason,
      result,
      details,
    });
  }

  function touch(out: TickOutput, rec: RecommendationRecord, created = false) {
    out.touched.set(rec.id, rec);
    out.events.push({
      type: created ? 'recommendation.created' : 'recommendation.updated',
      data: toRecommendation(rec),
    });
  }

  function observedShares(model: string | undefined): Record<string, number> | undefined {
    if (!model || !lastObservation) return undefined;
    const pools = lastObservation.pools.filter((p) => p.model === model);
    const total = pools.reduce((s, p) => s + (p.main?.requests ?? 0), 0);
    if (total <= 0) return undefined;
    return Object.fromEntries(
      pools.map((p) => [p.pool, Math.round(((p.main?.requests ?? 0) / total) * 1000) / 1000]),
    );
  }

  function scopeMetrics(rec: RecommendationRecord, which: 'main' | 'fast'): ScopeMetrics | null {
    if (!lastObservation) return null;
    return summarizeScope(
      lastObservation.pools.filter((p) => rec.scopePools.includes(p.pool)),
      which,
    );
  }

  function applyRecord(
    s: ControlState,
    out: TickOutput,
    rec: RecommendationRecord,
    atNs: bigint,
    actor: string,
    decision: AuditDecision,
    note: string,
  ): ControlAction {
    const weights = observedShares(rec.target.model);
    rec.previousAction = describePrevious(s.actuated, rec.kind, rec.target, rec.action, weights);
    rec.baseline = scopeMetrics(rec, 'fast');
    applyToActuated(s.actuated, rec.kind, rec.target, rec.action, atNs, weights, rec.cause);
    rec.state = 'applied';
    rec.appliedNs = atNs;
    rec.updatedNs = atNs;
    rec.actionId = randomUUID();
    s.open.set(rec.id, rec);
    remember(s, rec, rec.direction, atNs);
    const action: ControlAction = {
      id: rec.actionId,
      recommendationId: rec.id,
      type: 'apply',
      kind: rec.kind,
      target: rec.target,
      action: rec.action,
      at: nsToIso(atNs),
    };
    out.actions.push(action);
    out.events.push({ type: 'control.action', data: action });
    touch(out, rec);
    audit(out, atNs, decision, actor, rec, note, 'applied', {
      action: rec.action,
      previousAction: rec.previousAction,
    });
    return action;
  }

  function newRecord(c: Candidate, atNs: bigint): RecommendationRecord {
    return {
      id: randomUUID(),
      kind: c.kind,
      target: c.target,
      targetKey: formatTargetKey(c.target),
      action: c.action,
      direction: c.direction,
      reason: c.reason,
      evidence: c.evidence,
      expectedImpact: c.expectedImpact,
      confidence: c.confidence,
      state: 'proposed',
      policy: null,
      gate: null,
      scopePools: c.scopePools,
      cause: c.cause ?? null,
      createdNs: atNs,
      updatedNs: atNs,
      appliedNs: null,
      verifiedNs: null,
      previousAction: null,
      baseline: null,
      actionId: null,
      verification: null,
    };
  }

  function buildContext(s: ControlState, obs: FleetObservation): DetectContext {
    return {
      obs,
      state: s,
      slo: config.slo,
      control,
      tuning,
      windowLabel: control.window,
      fastWindowLabel: `${Math.round(fastWindowMs / 1000)}s`,
      suspects: new Set(),
      handled: new Set(),
    };
  }

  // ---- one tick ----------------------------------------------------------------------------------
  // A span per tick for Governor's own traces (a no-op unless the server started self-tracing).
  function tick(atNs: bigint, dryRun: boolean): Promise<EvaluateResult> {
    const attributes = { 'governor.control.at': nsToIso(atNs), 'governor.control.dry_run': dryRun };
    // Looked up per tick, not once per module: a restarted SDK (tests) registers a new provider.
    return trace
      .getTracer('@governor/control')
      .startActiveSpan('governor.control.tick', { attributes }, async (span) => {
        try {
          const result = await runTick(atNs, dryRun);
          span.setAttributes({
            'governor.control.recommendations': result.recommendations.length,
            'governor.control.actions': result.actions.length,
          });
          return result;
        } catch (error) {
          span.recordException(error as Error);
          span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
          throw error;
        } finally {
          span.end();
        }
      });
  }

  async function runTick(atNs: bigint, dryRun: boolean): Promise<EvaluateResult> {
    const s = dryRun ? structuredClone(state) : state;
    const out: TickOutput = { touched: new Map(), audit: [], actions: [], events: [] };
    const obs = await observeFleet({
      signals,
      config,
      atNs,
      windowMs,
      fastWindowMs,
      readReadyReplicas: options.readReadyReplicas,
      readPrefillSpeed: options.readPrefillSpeed,
      readEngineWork: options.readEngineWork,
      readRequestArrivals: options.readRequestArrivals,
      minFastRequests: tuning.minRequests,
    });
    const previousObservation = lastObservation;
    lastObservation = obs;
    noteExternalScaling(s, obs, atNs);
    const ctx = buildContext(s, obs);

    // Human decisions made between ticks travel with this tick's response (lockstep callers).
    const handedOut = dryRun ? [] : s.outbox.splice(0);

    // Proposals nobody acted on expire; applied actions are verified or rolled back.
    for (const rec of [...s.open.values()]) {
      if (OPEN_STATES.includes(rec.state) && atNs - rec.updatedNs >= ttlNs) {
        rec.state = 'expired';
        rec.updatedNs = atNs;
        s.open.delete(rec.id);
        touch(out, rec);
        audit(
          out,
          atNs,
          'expired',
          'engine',
          rec,
          `not acted on within ${control.recommendation_ttl_s} s`,
          'expired',
        );
      }
    }
    for (const rec of [...s.open.values()]) {
      if (rec.state === 'applied') verifyRecord(s, out, ctx, rec, atNs);
    }
    for (const rec of [...s.open.values()]) {
      if (rec.state === 'approved')
        applyRecord(
          s,
          out,
          rec,
          atNs,
          rec.policy ? `policy:${rec.policy}` : 'user',
          'applied',
          'approved earlier; applied at the next tick',
        );
    }

    // One decision per (kind, target) and tick: the first policy in attribution order wins, urgent
    // (safety) decisions first — a peer sized for shifted traffic is not also scaled in.
    const candidates = runDetectors(ctx).sort(
      (a, b) => Number(b.urgent ?? false) - Number(a.urgent ?? false),
    );
    const decided = new Set<string>();
    for (const c of candidates) {
      const key = `${c.kind}|${formatTargetKey(c.target)}`;
      if (decided.has(key)) continue;
      decided.add(key);
      considerCandidate(s, out, c, atNs);
    }
    updateLearning(s, obs, ctx.suspects, tuning, config.slo.ttft_ms ?? null);
    if (s.lastTickNs === null || atNs > s.lastTickNs) s.lastTickNs = atNs;
    if (s.firstTickNs === null || atNs < s.firstTickNs) s.firstTickNs = atNs;

    if (dryRun) {
      lastObservation = previousObservation ?? obs;
    } else {
      await repository.saveRecommendations([...out.touched.values()]);
      await repository.appendAudit(out.audit);
      for (const e of out.events) emit(e);
      for (const a of out.actions) deliveries.enqueue(a);
      emit({
        type: 'control.tick',
        data: { at: nsToIso(atNs), recommendations: out.touched.size, actions: out.actions.length },
      });
    }
    return {
      at: nsToIso(atNs),
      recommendations: [...out.touched.values()].map(toRecommendation),
      actions: [...handedOut, ...out.actions],
    };
  }

  /**
   * A pool whose replica count moved without Governor (an operator, another autoscaler, a fault)
   * was scaled all the same: its cooldown and hysteresis start from that change.
   */
  function noteExternalScaling(s: ControlState, obs: FleetObservation, atNs: bigint) {
    for (const p of obs.pools) {
      const asked = s.memory.get(`scale|pool=${p.pool}`);
      if (
        asked?.expectReplicas != null &&
        asked.direction === 'increase' &&
        asked.readyNs === undefined &&
        p.readyReplicas !== null &&
        p.readyReplicas >= asked.expectReplicas
      ) {
        asked.readyNs = atNs;
      }
      if (p.replicas === null) continue;
      const previous = s.observedReplicas[p.pool];
      s.observedReplicas[p.pool] = p.replicas;
      if (previous === undefined || previous === p.replicas) continue;
      const direction = p.replicas > previous ? 'increase' : 'decrease';
      const key = `scale|pool=${p.pool}`;
      const memory = s.memory.get(key);
      const recent = memory !== undefined && atNs - memory.appliedNs <= secondsToNs(control.settle_timeout_s);
      // Replicas are a time average over the short window: while Governor's own scale action lands
      // (replicas starting, or draining their requests one by one) the count moves unevenly, even
      // back a step. Any count between where the action started and where it goes is its doing.
      const onItsWay =
        recent &&
        memory.recommendationId !== 'external' &&
        memory.expectReplicas !== null &&
        memory.fromReplicas !== undefined &&
        p.replicas >= Math.min(memory.fromReplicas, memory.expectReplicas) &&
        p.replicas <= Math.max(memory.fromReplicas, memory.expectReplicas);
      const explained = (recent && memory.direction === direction) || onItsWay;
      // A replica crashing or being replaced while Governor's scale-up still starts does not make
      // the pool settled: the scale-up keeps waiting for the replicas it asked for.
      const scalingUp =
        recent &&
        memory.recommendationId !== 'external' &&
        memory.direction === 'increase' &&
        memory.readyNs === undefined;
      if (explained || scalingUp) continue;
      s.memory.set(key, { direction, appliedNs: atNs, recommendationId: 'external', expectReplicas: null });
    }
  }

  /** Pools in the recommendation's scope that are outliers against their peers right now. */
  function faultyPoolsInScope(ctx: DetectContext, rec: RecommendationRecord): Set<string> {
    const faulty = new Set<string>();
    for (const pool of ctx.obs.pools) {
      if (!rec.scopePools.includes(pool.pool) || pool.model === null) continue;
      const peers = ctx.obs.pools.filter((p) => p.model === pool.model);
      const a = assessPoolAgainstPeers(ctx, pool, peers);
      if (a.errorOutlier || a.latencyOutlier) faulty.add(pool.pool);
    }
    return faulty;
  }

  /** Whether another shift of the same model's traffic was applied after `rec` (a shift). */
  function isModelShiftedSince(s: ControlState, rec: RecommendationRecord): boolean {
    if (rec.kind !== 'shift_traffic' || !rec.target.model || rec.appliedNs === null) return false;
    const prefix = 'shift_traffic|';
    for (const [key, m] of s.memory) {
      if (!key.startsWith(prefix) || m.recommendationId === rec.id || m.appliedNs <= rec.appliedNs) continue;
      if (parseTargetKey(key.slice(prefix.length)).model === rec.target.model) return true;
    }
    return false;
  }

  /** Whether the pool serves enough requests in the short window to be judged against its peers. */
  function isAssessable(ctx: DetectContext, poolName: string): boolean {
    const pool = ctx.obs.pools.find((p) => p.pool === poolName);
    return (pool?.fast?.requests ?? 0) >= minJudgedRequests(tuning);
  }

  function verifyRecord(
    s: ControlState,
    out: TickOutput,
    ctx: DetectContext,
    rec: RecommendationRecord,
    atNs: bigint,
  ) {
    const waitS = Math.max(control.verify_after_s, control.cooldown_s);
    // A rollback reverses the action: never at or inside the cooldown.
    if (rec.appliedNs === null || atNs - rec.appliedNs <= secondsToNs(waitS)) return;
    const waitedOut = atNs - rec.appliedNs >= secondsToNs(control.settle_timeout_s);
    if (rec.kind === 'scale' && rec.direction === 'increase' && rec.target.pool) {
      const pool = ctx.obs.pools.find((p) => p.pool === rec.target.pool);
      if (pool && !readScaleReadiness(ctx, pool).settled && !waitedOut) return;
    }
    const faulty = faultyPoolsInScope(ctx, rec);
    const moveAway =
      (rec.kind === 'circuit_break' || rec.kind === 'shift_traffic') &&
      (rec.kind === 'circuit_break' || rec.cause === 'incident');
    // Taking traffic from a pool that is still an outlier, or that serves too little to tell, is not
    // undone: the way back is traffic recovery's probes. Any other action whose scope holds a faulty
    // pool waits: the fault, not the action, moved goodput.
    if (moveAway && rec.target.pool && (faulty.has(rec.target.pool) || !isAssessable(ctx, rec.target.pool))) {
      if (!waitedOut) return;
    } else if (!moveAway && faulty.size > 0 && !waitedOut) {
      return;
    }
    const before = rec.baseline ?? summarizeScope([], 'fast');
    const after = summarizeScope(
      ctx.obs.pools.filter((p) => rec.scopePools.includes(p.pool)),
      'main',
    );
    const latest = s.memory.get(`${rec.kind}|${rec.targetKey}`);
    const superseded = latest !== undefined && latest.recommendationId !== rec.id;
    // A shift sets the model's whole weight vector: once a later shift of the same model (another
    // pool's incident, say) set it again, rolling this one back would restore weights from before both.
    const reshifted = !superseded && isModelShiftedSince(s, rec);
    const judgement = superseded
      ? {
          verdict: 'verified' as const,
          summary: 'a later action on the same target replaced it; nothing to roll back',
        }
      : reshifted
        ? {
            verdict: 'verified' as const,
            summary: `a later shift of ${rec.target.model}'s traffic replaced its weights; nothing to roll back`,
          }
        : judgeVerification(
            rec,
            before,
            after,
            config.slo,
            tuning.minRequests,
            // The baseline is the short window when the action was applied (a quiet pool's control
            // window, which reads its rate high: no load rise then), the judgement the control window.
            before.requests > 0
              ? after.requests / ctx.obs.windowMs / (before.requests / ctx.obs.fastWindowMs)
              : null,
          );
    const asRecord = (m: ScopeMetrics): Record<string, number | null> => ({ ...m });
    rec.verification = {
      at: nsToIso(atNs),
      verdict: judgement.verdict,
      summary: judgement.summary,
      before: asRecord(before),
      after: asRecord(after),
    };
    rec.verifiedNs = atNs;
    rec.updatedNs = atNs;
    s.open.delete(rec.id);
    if (judgement.verdict === 'verified') {
      rec.state = 'verified';
      touch(out, rec);
      audit(out, atNs, 'verified', 'engine', rec, judgement.summary, 'verified', {
        before,
        after,
        expectedImpact: rec.expectedImpact,
      });
      return;
    }
    rec.state = 'rolled_back';
    const previous = rec.previousAction ?? {};
    applyToActuated(
      s.actuated,
      rec.kind,
      rec.target,
      previous,
      atNs,
      observedShares(rec.target.model),
      rec.cause,
    );
    remember(s, rec, rec.direction === 'increase' ? 'decrease' : 'increase', atNs);
    const action: ControlAction = {
      id: randomUUID(),
      recommendationId: rec.id,
      type: 'rollback',
      kind: rec.kind,
      target: rec.target,
      action: previous,
      at: nsToIso(atNs),
    };
    out.actions.push(action);
    out.events.push({ type: 'control.action', data: action });
    touch(out, rec);
    audit(
      out,
      atNs,
      'rolled_back',
      'engine',
      rec,
      judgement.summary,
      'rolled_back',
      { before, after, rollback: previous },
      action.id,
    );
  }

  function considerCandidate(s: ControlState, out: TickOutput, c: Candidate, atNs: bigint) {
    const targetKey = formatTargetKey(c.target);
    const memory = s.memory.get(`${c.kind}|${targetKey}`);
    // No reversal inside the cooldown; no pile-up on a target whose last action is still landing.
    if (memory && memory.direction !== c.direction && atNs - memory.appliedNs <= cooldownNs) return;
    if (
      memory &&
      memory.direction === c.direction &&
      !c.urgent &&
      atNs - memory.appliedNs < BigInt(fastWindowMs) * 1_000_000n
    )
      return;
    // A human said no to this kind of change on this target: do not ask again until the TTL passes.
    const actionKey = `${c.kind}|${targetKey}|${c.direction}`;
    const rejectedAt = s.rejected.get(actionKey);
    if (rejectedAt !== undefined && atNs - rejectedAt < ttlNs) return;

    const existing = [...s.open.values()].find(
      (r) => r.kind === c.kind && r.targetKey === targetKey && OPEN_STATES.includes(r.state),
    );
    if (existing?.state === 'approved') return;
    let rec: RecommendationRecord;
    let created = false;
    if (existing && existing.direction === c.direction) {
      // One open recommendation per target and direction, kept current as the evidence moves.
      rec = existing;
      const actionChanged = stableJson(rec.action) !== stableJson(c.action);
      rec.action = c.action;
      rec.reason = c.reason;
      rec.evidence = c.evidence;
      rec.expectedImpact = c.expectedImpact;
      rec.confidence = c.confidence;
      rec.scopePools = c.scopePools;
      rec.updatedNs = atNs;
      if (actionChanged) {
        touch(out, rec);
        audit(out, atNs, 'refreshed', 'engine', rec, rec.reason, 'proposed', { action: rec.action });
      } else {
        out.touched.set(rec.id, rec);
      }
    } else {
      rec = newRecord(c, atNs);
      created = true;
      if (existing) {
        existing.state = 'expired';
        existing.updatedNs = atNs;
        existing.gate = `superseded by ${rec.id}`;
        s.open.delete(existing.id);
        touch(out, existing);
        audit(
          out,
          atNs,
          'superseded',
          'engine',
          existing,
          `the opposite action is now recommended (${rec.id})`,
          'expired',
        );
      }
      s.open.set(rec.id, rec);
    }

    const previous = describePrevious(s.actuated, c.kind, c.target, c.action, observedShares(c.target.model));
    const gate = gateCandidate({
      kind: c.kind,
      target: c.target,
      action: c.action,
      previous,
      confidence: c.confidence,
      atNs,
      policies,
      control,
      memory,
      autoApplied: s.autoApplied,
    });
    const gateChanged = rec.gate !== gate.note;
    rec.policy = gate.policy;
    rec.gate = gate.note;
    if (gate.decision === 'auto_apply') {
      rec.action = gate.action;
      if (created)
        audit(out, atNs, 'proposed', 'engine', rec, rec.reason, 'proposed', { confidence: rec.confidence });
      applyRecord(s, out, rec, atNs, `policy:${gate.policy}`, 'auto_applied', gate.note);
      const list = s.autoApplied.get(gate.policy) ?? [];
      list.push(atNs);
      s.autoApplied.set(
        gate.policy,
        list.filter((t) => atNs - t < secondsToNs(3600)),
      );
      return;
    }
    if (created) {
      touch(out, rec, true);
      audit(out, atNs, 'proposed', 'engine', rec, rec.reason, 'proposed', {
        confidence: rec.confidence,
        gate: gate.note,
      });
    }
    if (gate.decision === 'dry_run' && (created || gateChanged)) {
      audit(out, atNs, 'dry_run', `policy:${gate.policy}`, rec, gate.note, 'not applied (dry run)', {
        action: gate.action,
      });
    }
  }

  async function recordDelivery(outcome: DeliveryOutcome, action: ControlAction) {
    const atNs = state.lastTickNs ?? BigInt(now()) * 1_000_000n;
    const entry: AuditEntry = {
      id: randomUUID(),
      atNs,
      recordedAtMs: now(),
      recommendationId: action.recommendationId,
      actionId: action.id,
      kind: action.kind,
      target: action.target,
      decision: outcome.status === 'delivered' ? 'delivered' : 'delivery_failed',
      actor: `actuator:${outcome.actuator}`,
      reason:
        outcome.status === 'delivered'
          ? `${action.type} delivered to ${outcome.actuator}`
          : `${action.type} not delivered to ${outcome.actuator}: ${outcome.error}`,
      result: outcome.status === 'delivered' ? `delivered (HTTP ${outcome.httpStatus ?? 'n/a'})` : 'failed',
      details: { attempts: outcome.attempts, httpStatus: outcome.httpStatus, error: outcome.error },
    };
    try {
      await repository.appendAudit([entry]);
    } catch (error) {
      reportError(error);
    }
    emit({ type: 'control.delivery', data: outcome });
  }

  async function resolveAt(atNs: bigint | undefined): Promise<bigint> {
    if (atNs !== undefined) return atNs;
    const watermark = await signals.watermarkNs();
    return watermark ?? BigInt(now()) * 1_000_000n;
  }

  function nowNs(): bigint {
    return state.lastTickNs ?? BigInt(now()) * 1_000_000n;
  }

  async function findOpen(id: string): Promise<RecommendationRecord | ControlFailure> {
    const rec = state.open.get(id);
    if (rec) return rec;
    const stored = await repository.getRecommendation(id);
    if (!stored) return { ok: false, code: 'not_found', message: `no recommendation ${id}` };
    return { ok: false, code: 'invalid_transition', message: `recommendation ${id} is ${stored.state}` };
  }

  async function persist(out: TickOutput) {
    await repository.saveRecommendations([...out.touched.values()]);
    await repository.appendAudit(out.audit);
    for (const e of out.events) emit(e);
  }

  const emptyOut = (): TickOutput => ({ touched: new Map(), audit: [], actions: [], events: [] });

  async function runTicksToWatermark(): Promise<number> {
    const watermark = await signals.watermarkNs();
    if (watermark === null) return 0;
    const interval = secondsToNs(control.interval_s);
    let next = state.lastTickNs === null ? (watermark / interval) * interval : state.lastTickNs + interval;
    // Far behind (a restart after a long pause): skip to the newest boundary rather than replaying.
    if (watermark - next > 10n * interval) next = (watermark / interval) * interval;
    let ticks = 0;
    const boundNs = maxTickNs();
    while (next <= watermark && next <= boundNs && !closed) {
      const at = next;
      await serialize(() => tick(at, false));
      ticks += 1;
      next += interval;
    }
    return ticks;
  }

  function tickToWatermark(): Promise<number> {
    polling ??= runTicksToWatermark().finally(() => {
      polling = null;
    });
    return polling;
  }

  return {
    async evaluate(opts = {}) {
      if (!control.enabled)
        return {
          ok: false,
          code: 'disabled',
          message: 'the control loop is disabled (control.enabled: false)',
        };
      const atNs = await resolveAt(opts.atNs);
      return serialize(async () => {
        if (atNs > maxTickNs()) {
          return {
            ok: false as const,
            code: 'time_ahead' as const,
            message: `at ${nsToIso(atNs)} is past the server clock + ingest.max_future_skew (${nsToIso(maxTickNs())}); a tick cannot run ahead of real time`,
          };
        }
        if (!opts.dryRun && state.lastTickNs !== null && atNs < state.lastTickNs) {
          return {
            ok: false as const,
            code: 'time_reversed' as const,
            message: `at ${nsToIso(atNs)} is before the last tick ${nsToIso(state.lastTickNs)}; evaluate earlier times with dryRun: true`,
          };
        }
        return { ok: true as const, result: await tick(atNs, opts.dryRun === true) };
      });
    },

    async listRecommendations(filter) {
      const rows = await repository.listRecommendations({
        states: filter.states,
        limit: filter.limit ?? 100,
      });
      return rows.map(toRecommendation);
    },

    async getRecommendation(id) {
      const rec = await repository.getRecommendation(id);
      return rec ? toRecommendation(rec) : null;
    },

    approve(id, actor, note) {
      return serialize(async () => {
        const found = await findOpen(id);
        if ('ok' in found) return found;
        if (found.state !== 'proposed') {
          return {
            ok: false as const,
            code: 'invalid_transition' as const,
            message: `recommendation ${id} is ${found.state}, not proposed`,
          };
        }
        const out = emptyOut();
        const atNs = nowNs();
        found.state = 'approved';
        found.updatedNs = atNs;
        touch(out, found);
        audit(
          out,
          atNs,
          'approved',
          `user:${actor}`,
          found,
          note ?? 'approved; applies at the next tick',
          'approved',
        );
        await persist(out);
        return { ok: true as const, recommendation: toRecommendation(found) };
      });
    },

    reject(id, actor, note) {
      return serialize(async () => {
        const found = await findOpen(id);
        if ('ok' in found) return found;
        if (!OPEN_STATES.includes(found.state)) {
          return {
            ok: false as const,
            code: 'invalid_transition' as const,
            message: `recommendation ${id} is ${found.state}`,
          };
        }
        const out = emptyOut();
        const atNs = nowNs();
        found.state = 'rejected';
        found.updatedNs = atNs;
        state.open.delete(found.id);
        state.rejected.set(`${found.kind}|${found.targetKey}|${found.direction}`, atNs);
        touch(out, found);
        audit(
          out,
          atNs,
          'rejected',
          `user:${actor}`,
          found,
          note ??
            'rejected; this change on this target is not proposed again until the recommendation TTL passes',
          'rejected',
        );
        await persist(out);
        return { ok: true as const, recommendation: toRecommendation(found) };
      });
    },

    apply(id, actor, note) {
      return serialize(async () => {
        const found = await findOpen(id);
        if ('ok' in found) return found;
        if (!OPEN_STATES.includes(found.state)) {
          return {
            ok: false as const,
            code: 'invalid_transition' as const,
            message: `recommendation ${id} is ${found.state}; it can be applied once, from proposed or approved`,
          };
        }
        const out = emptyOut();
        const action = applyRecord(
          state,
          out,
          found,
          nowNs(),
          `user:${actor}`,
          'applied',
          note ?? 'applied by hand',
        );
        state.outbox.push(action);
        await persist(out);
        deliveries.enqueue(action);
        return { ok: true as const, recommendation: toRecommendation(found), action };
      });
    },

    async listAudit(filter) {
      const rows = await repository.listAudit({
        recommendationId: filter.recommendationId,
        limit: filter.limit ?? 200,
      });
      return rows.map(toAuditView);
    },

    getPolicies() {
      return structuredClone(policySource);
    },

    setPolicies(next, actor) {
      return serialize(async () => {
        const updatedAtMs = now();
        await repository.savePolicies({ configHash, policies: next, updatedBy: actor, updatedAtMs });
        policies = next;
        policySource = {
          policies: next,
          source: 'api',
          updatedBy: actor,
          updatedAt: new Date(updatedAtMs).toISOString(),
        };
        const out = emptyOut();
        audit(
          out,
          nowNs(),
          'policies_updated',
          `user:${actor}`,
          null,
          `${next.length} polic${next.length === 1 ? 'y' : 'ies'} set through the API`,
          'updated',
          {
            policies: next.map((p) => p.name),
          },
        );
        await persist(out);
        return structuredClone(policySource);
      });
    },

    desiredReplicas() {
      const out: Record<string, number> = {};
      for (const p of lastObservation?.pools ?? []) if (p.replicas !== null) out[p.pool] = p.replicas;
      for (const [pool, n] of Object.entries(state.actuated.replicas)) out[pool] = n;
      return out;
    },

    tickToWatermark,

    start() {
      if (ticker || !control.enabled || control.tick !== 'watermark') return;
      ticker = setInterval(() => {
        tickToWatermark().catch(reportError);
      }, options.tickPollMs ?? 1000);
      ticker.unref();
    },

    pendingDeliveries: () => deliveries.pending(),
    drainDeliveries: (timeoutMs) => deliveries.drain(timeoutMs),

    async close() {
      closed = true;
      if (ticker) clearInterval(ticker);
      ticker = null;
      await polling;
      await chain;
      await deliveries.drain(1000);
      await deliveries.close();
      await Promise.all(recordings);
    },
  };
}
