import {
  type ControlAction,
  type ExpectedImpact,
  type PredictedAfter,
  isImpactMeasure,
} from '@governor/conventions';
import { randomUUID } from 'node:crypto';
import type { DetectContext } from '../detectors/detect-context.ts';
import { assessPoolAgainstPeers } from '../detectors/assess-pool-against-peers.ts';
import { readScaleReadiness } from '../detectors/scale-readiness.ts';
import { MIN_JUDGED_SAMPLE, summarizeScope, MIN_P95_SAMPLE } from '../detectors/pool-signals.ts';
import { nsToIso, secondsToNs } from '../time.ts';
import { applyToActuated } from './apply-to-actuated.ts';
import { observedShares, rememberAction } from './apply-record.ts';
import type { ControlState, RecommendationRecord, ScopeMetrics } from './control-types.ts';
import type { EngineSettings } from './engine-settings.ts';
import { type VerificationJudgement, judgeVerification } from './judge-verification.ts';
import { calmErrorRate, collapseShare, errorBudget } from '../objective/operating-bounds.ts';
import { type TickOutput, recordAudit, touchRecord } from './tick-output.ts';
import { previousOf } from './kind-action.ts';
import { memoryKey, parseMemoryKey } from './memory-key.ts';

// An applied action is judged once its wait is over: verified, or rolled back to what it replaced.

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
  for (const [key, m] of s.memory) {
    if (m.recommendationId === rec.id || m.appliedNs <= rec.appliedNs) continue;
    const { kind, target } = parseMemoryKey(key);
    if (kind === 'shift_traffic' && target.model === rec.target.model) return true;
  }
  return false;
}

/** Whether the pool serves enough requests in the short window to be judged against its peers. */
function isAssessable(ctx: DetectContext, poolName: string): boolean {
  const pool = ctx.obs.pools.find((p) => p.pool === poolName);
  return (pool?.fast?.requests ?? 0) >= MIN_JUDGED_SAMPLE;
}

/** Verifies or rolls back an applied recommendation whose wait is over; otherwise leaves it open. */
export function verifyRecord(
  settings: EngineSettings,
  s: ControlState,
  out: TickOutput,
  ctx: DetectContext,
  rec: RecommendationRecord,
  atNs: bigint,
): void {
  const { control, config, tuning } = settings;
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
  const latest = s.memory.get(memoryKey(rec.kind, rec.targetKey));
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
          MIN_P95_SAMPLE,
          {
            errorBudget: errorBudget(control),
            collapse: collapseShare(control, tuning),
            calm: calmErrorRate(control, tuning),
          },
          // The baseline is the short window when the action was applied (a quiet pool's control
          // window, which reads its rate high: no load rise then), the judgement the control window
          // (what of it the store covers).
          before.requests > 0 && ctx.obs.coveredMs > 0
            ? after.requests / ctx.obs.coveredMs / (before.requests / ctx.obs.fastWindowMs)
            : null,
        );
  closeWithVerdict(s, rec, atNs, judgement, before, after);
  if (judgement.verdict === 'verified') {
    rec.state = 'verified';
    touchRecord(out, rec);
    recordAudit(
      out,
      settings.now,
      atNs,
      { decision: 'verified', details: { before, after, expectedImpact: rec.expectedImpact } },
      'engine',
      rec,
      judgement.summary,
      'verified',
    );
    return;
  }
  rollBack(settings, s, out, ctx, rec, atNs, judgement.summary, before, after);
  rollBackScaleInsAfter(settings, s, out, ctx, rec, atNs);
}

/**
 * A shift's rollback gives traffic back to pools it had taken it from. A scale-in of such a pool
 * applied since the shift, still waiting for its own verification, was sized for the load the shift
 * left it: it is rolled back with the shift, or the traffic would come back to replicas that are gone.
 */
function rollBackScaleInsAfter(
  settings: EngineSettings,
  s: ControlState,
  out: TickOutput,
  ctx: DetectContext,
  shift: RecommendationRecord,
  atNs: bigint,
): void {
  const restored = previousOf(shift);
  if (shift.kind !== 'shift_traffic' || restored?.kind !== 'shift_traffic' || shift.appliedNs === null)
    return;
  const shifted = shift.action.weights;
  const regaining = new Set(
    Object.entries(restored.action.weights)
      .filter(([pool, weight]) => weight > (shifted[pool] ?? 0))
      .map(([pool]) => pool),
  );
  for (const rec of [...s.open.values()]) {
    if (rec.kind !== 'scale' || rec.direction !== 'decrease' || rec.state !== 'applied') continue;
    if (rec.appliedNs === null || rec.appliedNs <= shift.appliedNs) continue;
    if (!rec.target.pool || !regaining.has(rec.target.pool)) continue;
    if (s.memory.get(memoryKey(rec.kind, rec.targetKey))?.recommendationId !== rec.id) continue;
    const summary = `the earlier shift of ${shift.target.model ?? 'its model'}'s traffic was rolled back: ${rec.target.pool} gets back the traffic this scale-in was sized without`;
    const before = rec.baseline ?? summarizeScope([], 'fast');
    const after = summarizeScope(
      ctx.obs.pools.filter((p) => rec.scopePools.includes(p.pool)),
      'main',
    );
    closeWithVerdict(s, rec, atNs, { verdict: 'rolled_back', summary }, before, after);
    rollBack(settings, s, out, ctx, rec, atNs, summary, before, after);
  }
}

/** Records `judgement` as `rec`'s verification (with what it predicted) and closes it. */
function closeWithVerdict(
  s: ControlState,
  rec: RecommendationRecord,
  atNs: bigint,
  judgement: VerificationJudgement,
  before: ScopeMetrics,
  after: ScopeMetrics,
): void {
  rec.verification = {
    at: nsToIso(atNs),
    verdict: judgement.verdict,
    summary: judgement.summary,
    before: { ...before },
    after: { ...after },
    predicted: predictedAfter(rec.expectedImpact),
  };
  rec.verifiedNs = atNs;
  rec.updatedNs = atNs;
  s.open.delete(rec.id);
}

/** Restores what `rec` replaced and sends that as a rollback action. */
function rollBack(
  settings: EngineSettings,
  s: ControlState,
  out: TickOutput,
  ctx: DetectContext,
  rec: RecommendationRecord,
  atNs: bigint,
  summary: string,
  before: ScopeMetrics,
  after: ScopeMetrics,
): void {
  const previous = previousOf(rec);
  if (previous === null) {
    // applyRecord records what an action replaces; only a record written without it (corrupt or
    // from before that existed) gets here. Nothing known to restore: a human has to look.
    rec.state = 'expired';
    rec.gate = 'verification failed and what it replaced is not recorded: roll back by hand';
    touchRecord(out, rec);
    recordAudit(
      out,
      settings.now,
      atNs,
      { decision: 'expired', details: { before, after } },
      'engine',
      rec,
      summary,
      'not rolled back',
    );
    return;
  }
  rec.state = 'rolled_back';
  applyToActuated(
    s.actuated,
    previous,
    rec.target,
    atNs,
    observedShares(ctx.obs, rec.target.model),
    rec.cause,
  );
  rememberAction(s, rec, rec.direction === 'increase' ? 'decrease' : 'increase', atNs);
  const action: ControlAction = {
    ...previous,
    id: randomUUID(),
    recommendationId: rec.id,
    type: 'rollback',
    target: rec.target,
    at: nsToIso(atNs),
  };
  out.actions.push(action);
  out.events.push({ type: 'control.action', data: action });
  touchRecord(out, rec);
  recordAudit(
    out,
    settings.now,
    atNs,
    { decision: 'rolled_back', details: { before, after, rollback: previous.action } },
    'engine',
    rec,
    summary,
    'rolled_back',
    action.id,
  );
}

/** What the action predicted for after it (each `{from, to}` of its expectedImpact, the `to`). */
function predictedAfter(expectedImpact: ExpectedImpact): PredictedAfter {
  const out: PredictedAfter = {};
  const keep = (key: keyof PredictedAfter, to: number | null | undefined) => {
    if (typeof to === 'number' && Number.isFinite(to)) out[key] = to;
  };
  // In the order the detector wrote them, as before.
  for (const key of Object.keys(expectedImpact)) {
    if (key === 'weight') keep(key, expectedImpact.weight?.to);
    else if (isImpactMeasure(key)) keep(key, expectedImpact[key]?.to);
  }
  return out;
}
