import { SpanStatusCode, trace } from '@opentelemetry/api';
import { MIN_P95_SAMPLE } from '../detectors/pool-signals.ts';
import type { ControlAction, PolicyConfig, Recommendation } from '@governor/conventions';
import type {
  EngineWorkReader,
  PrefillSpeedReader,
  ReadyReplicasReader,
  RequestArrivalsReader,
  SignalsReader,
} from '@governor/signals';
import type { DetectContext } from '../detectors/detect-context.ts';
import { findSuspects } from '../detectors/detect-pool-outliers.ts';
import { type FleetObservation, observeFleet } from '../observe-fleet.ts';
import type { ControlRepository } from '../state/control-repository.ts';
import { nsToIso } from '../time.ts';
import { applyRecord } from './apply-record.ts';
import { OPEN_STATES, considerCandidate } from './consider-candidate.ts';
import type { ControlState } from './control-types.ts';
import type { EngineSettings } from './engine-settings.ts';
import { noteExternalScaling } from './guards.ts';
import { persistOutput } from './persistence.ts';
import { runDetectors } from './run-detectors.ts';
import {
  type ControlEvent,
  type TickOutput,
  createTickOutput,
  recordAudit,
  touchRecord,
} from './tick-output.ts';
import { toRecommendation } from './to-api.ts';
import { updateLearning } from './update-learning.ts';
import { errorBudget } from '../objective/operating-bounds.ts';
import { verifyRecord } from './verify-record.ts';
import { type DecisionKey, type MemoryKey, decisionKey, memoryKey } from './memory-key.ts';

export interface EvaluateResult {
  at: string;
  recommendations: Recommendation[];
  actions: ControlAction[];
}

/** The readers a tick observes the fleet through (see observeFleet). */
export interface TickReaders {
  signals: SignalsReader;
  readReadyReplicas?: ReadyReplicasReader;
  readPrefillSpeed?: PrefillSpeedReader;
  readEngineWork?: EngineWorkReader;
  readRequestArrivals?: RequestArrivalsReader;
}

/** What a tick writes to and hands its actions to. */
export interface TickSinks {
  repository: ControlRepository;
  emit: (event: ControlEvent) => void;
  deliver: (action: ControlAction) => void;
  /** Called with the tick's observation as soon as it is read (the engine's latest view of the fleet). */
  observed: (obs: FleetObservation) => void;
}

export interface TickResult {
  result: EvaluateResult;
  /** The fleet as this tick observed it. */
  observation: FleetObservation;
}

/** One tick inside a span for Governor's own traces (a no-op unless the server started self-tracing). */
export function runTracedTick(
  settings: EngineSettings,
  readers: TickReaders,
  sinks: TickSinks,
  state: ControlState,
  policies: readonly PolicyConfig[],
  atNs: bigint,
  dryRun: boolean,
): Promise<TickResult> {
  const attributes = { 'governor.control.at': nsToIso(atNs), 'governor.control.dry_run': dryRun };
  // Looked up per tick, not once per module: a restarted SDK (tests) registers a new provider.
  return trace
    .getTracer('@governor/control')
    .startActiveSpan('governor.control.tick', { attributes }, async (span) => {
      try {
        const tick = await runTick(settings, readers, sinks, state, policies, atNs, dryRun);
        span.setAttributes({
          'governor.control.recommendations': tick.result.recommendations.length,
          'governor.control.actions': tick.result.actions.length,
        });
        return tick;
      } catch (error) {
        span.recordException(error as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
        throw error;
      } finally {
        span.end();
      }
    });
}

/**
 * One control tick at event time `atNs`: observe the fleet; expire, verify and apply what is open;
 * run the detectors and pass each candidate through the guards and the policy gate; learn. A dry run
 * works on a copy of the state and writes nothing.
 */
async function runTick(
  settings: EngineSettings,
  readers: TickReaders,
  sinks: TickSinks,
  state: ControlState,
  policies: readonly PolicyConfig[],
  atNs: bigint,
  dryRun: boolean,
): Promise<TickResult> {
  const { config, control, tuning, now } = settings;
  const s = dryRun ? structuredClone(state) : state;
  const out = createTickOutput();
  if (s.telemetryFromNs === null || atNs - s.telemetryFromNs < BigInt(settings.windowMs) * 1_000_000n)
    s.telemetryFromNs = await readers.signals.oldestEventNs();
  const obs = await observeFleet({
    signals: readers.signals,
    config,
    atNs,
    windowMs: settings.windowMs,
    fastWindowMs: settings.fastWindowMs,
    readReadyReplicas: readers.readReadyReplicas,
    readPrefillSpeed: readers.readPrefillSpeed,
    readEngineWork: readers.readEngineWork,
    readRequestArrivals: readers.readRequestArrivals,
    minFastRequests: MIN_P95_SAMPLE,
    telemetryFromNs: s.telemetryFromNs,
  });
  sinks.observed(obs);
  noteExternalScaling(control, s, obs, atNs);
  // Verification reads the pools against their peers itself; the detectors' suspects are found
  // after it, once rollbacks and approved actions have changed what is open and applied.
  const verifying = buildContext(settings, s, obs, new Set());

  // Human decisions made between ticks travel with this tick's response (lockstep callers).
  const handedOut = dryRun ? [] : s.outbox.splice(0);

  // Proposals nobody acted on expire; applied actions are verified or rolled back.
  for (const rec of [...s.open.values()]) {
    if (OPEN_STATES.includes(rec.state) && atNs - rec.updatedNs >= settings.ttlNs) {
      rec.state = 'expired';
      rec.updatedNs = atNs;
      s.open.delete(rec.id);
      touchRecord(out, rec);
      recordAudit(
        out,
        now,
        atNs,
        { decision: 'expired', details: {} },
        'engine',
        rec,
        `not acted on within ${control.recommendation_ttl_s} s`,
        'expired',
      );
    }
  }
  for (const rec of [...s.open.values()]) {
    if (rec.state === 'applied') verifyRecord(settings, s, out, verifying, rec, atNs);
  }
  for (const rec of [...s.open.values()]) {
    if (rec.state === 'approved')
      applyRecord(
        settings,
        s,
        out,
        obs,
        rec,
        atNs,
        rec.policy ? `policy:${rec.policy}` : 'user',
        'applied',
        'approved earlier; applied at the next tick',
      );
  }

  // One decision per (kind, target) and tick: the first policy in attribution order wins, urgent
  // (safety) decisions first — a peer sized for shifted traffic is not also scaled in.
  const base = buildContext(settings, s, obs, new Set());
  const ctx: DetectContext = { ...base, suspects: findSuspects(base) };
  const candidates = runDetectors(ctx).sort((a, b) => Number(b.urgent ?? false) - Number(a.urgent ?? false));
  const decided = new Set<MemoryKey>();
  const considered = new Set<DecisionKey>();
  for (const c of candidates) {
    const key = memoryKey(c.kind, c.target);
    if (decided.has(key)) continue;
    decided.add(key);
    considered.add(decisionKey(c.kind, c.target, c.direction));
    considerCandidate(settings, s, out, obs, policies, c, atNs);
  }
  endHolds(s, out, considered);
  updateLearning(s, obs, ctx.suspects, tuning, config.slo.ttft_ms ?? null, errorBudget(control));
  if (s.lastTickNs === null || atNs > s.lastTickNs) s.lastTickNs = atNs;

  if (!dryRun) {
    await persistOutput(sinks.repository, out, sinks.emit);
    for (const a of out.actions) sinks.deliver(a);
    sinks.emit({
      type: 'control.tick',
      data: { at: nsToIso(atNs), recommendations: out.touched.size, actions: out.actions.length },
    });
  }
  return {
    result: {
      at: nsToIso(atNs),
      recommendations: [...out.touched.values()].map(toRecommendation),
      actions: [...handedOut, ...out.actions],
    },
    observation: obs,
  };
}

/** Holds on candidates no detector proposed this tick are over: a later one is audited afresh. */
function endHolds(s: ControlState, out: TickOutput, considered: ReadonlySet<DecisionKey>): void {
  for (const key of [...s.holds.keys()]) if (!considered.has(key)) s.holds.delete(key);
  for (const rec of s.open.values()) {
    if (rec.hold === null || s.holds.has(decisionKey(rec.kind, rec.targetKey, rec.direction))) continue;
    rec.hold = null;
    touchRecord(out, rec);
  }
}

function buildContext(
  settings: EngineSettings,
  s: ControlState,
  obs: FleetObservation,
  suspects: ReadonlySet<string>,
): DetectContext {
  return {
    obs,
    state: s,
    slo: settings.config.slo,
    control: settings.control,
    tuning: settings.tuning,
    windowLabel: settings.control.window,
    fastWindowLabel: `${Math.round(settings.fastWindowMs / 1000)}s`,
    suspects,
  };
}
