import type {
  ActionByKind,
  ControlAction,
  Evidence,
  ExpectedImpact,
  KindAction,
  HoldRule,
  RecommendationHold,
  RecommendationKind,
  RecommendationState,
  RecommendationTarget,
  RecommendationVerification,
} from '@governor/conventions';
import type { EngineTimeFit } from './fit-engine-time.ts';
import type { DecisionKey, MemoryKey } from './memory-key.ts';

/**
 * Which way an action pushes its target: `increase` adds capacity or intervention (more replicas,
 * an open breaker, stricter shedding or retry budget, more downgrading, more weight on the pool);
 * `decrease` takes it back. A reversal is an action opposite to the previous one on the same target.
 */
export type Direction = 'increase' | 'decrease';

/** A guard holding a candidate back: a named rule (HOLD_RULES) and why. */
export type Hold = RecommendationHold;

export type ShiftCause = 'incident' | 'recovery' | 'efficiency' | 'resource';

/** Observed health of a recommendation's scope (a pool, or the pools serving a model). */
export interface ScopeMetrics {
  requests: number;
  goodput: number | null;
  errorRate: number | null;
  /** Failures other than timeouts and rejections (those a pool short of capacity produces itself). */
  faultRate?: number | null;
  ttftP95Ms: number | null;
  queueP95Ms: number | null;
  costUsd: number | null;
  successPerDollar: number | null;
}

/** What a detector proposes before dedup, guards and the policy gate. */
export type Candidate = KindAction & CandidateFields;

interface CandidateFields {
  target: RecommendationTarget;
  direction: Direction;
  reason: string;
  evidence: Evidence[];
  expectedImpact: ExpectedImpact;
  confidence: number;
  /**
   * Why it waits, whatever its confidence: for a human (the objective does not pay for it, or the
   * peers it leans on have no room yet) or for the next tick (seen once, a transient until it
   * persists). Only a policy with min_confidence 0, which applies everything, auto-applies it.
   */
  waits?: string;
  /** The pools whose signals judge this action at verification. */
  scopePools: string[];
  /**
   * Why traffic moves (shift_traffic): `incident` (a faulty pool; recovery gives it back later),
   * `recovery`, `efficiency` (cheaper or better peer), `resource` (memory- or cache-bound). On a
   * scale: it sizes the pool for the share a shift of that cause moves onto it (plan-peer-capacity.ts),
   * which the release of those replicas later reads (forShare, judge-release.ts; a release has none).
   */
  cause?: ShiftCause;
  /**
   * Safety actions (circuit breaks of a failing pool, rollbacks) may follow a same-direction action
   * without waiting for it to settle.
   */
  urgent?: boolean;
}

/**
 * A kind with its action and the state a rollback restores (the same shape, recalled when applied;
 * null before).
 */
export type KindActions = {
  [K in RecommendationKind]: { kind: K; action: ActionByKind[K]; previousAction: ActionByKind[K] | null };
}[RecommendationKind];

/** A recommendation as the engine keeps it (event times in ns); the API shape is derived from it. */
export type RecommendationRecord = KindActions & RecordFields;

interface RecordFields {
  id: string;
  target: RecommendationTarget;
  targetKey: string;
  direction: Direction;
  reason: string;
  evidence: Evidence[];
  expectedImpact: ExpectedImpact;
  confidence: number;
  state: RecommendationState;
  policy: string | null;
  gate: string | null;
  scopePools: string[];
  cause: ShiftCause | null;
  createdNs: bigint;
  updatedNs: bigint;
  appliedNs: bigint | null;
  verifiedNs: bigint | null;
  baseline: ScopeMetrics | null;
  actionId: string | null;
  verification: RecommendationVerification | null;
  /** The guard holding this (open) recommendation back at the last tick; null when none does. */
  hold: Hold | null;
  /** Candidate.waits of the tick that last proposed it: no policy auto-applies it while set. */
  waits: string | null;
}

/** Last action per (kind, target): drives cooldowns, hysteresis and "still taking effect". */
export interface TargetMemory {
  direction: Direction;
  appliedNs: bigint;
  recommendationId: string;
  /**
   * For scale: the replica count asked for. A scale-up has settled when that many are ready; a
   * scale-in while more are still paid for (draining their in-flight requests) is in progress.
   */
  expectReplicas: number | null;
  /** For scale: the replica count the action started from. */
  fromReplicas?: number;
  /**
   * For a scale on a pool holding replicas for traffic a shift moved onto it (plan-peer-capacity.ts):
   * its model; its weight in Governor's routing and its replica count before that shift (what carried
   * its own share); its weight when this scale was applied (`expectReplicas` is the count for it).
   * Capacity follows that share back down (judge-release.ts).
   */
  forShare?: { model: string; baseWeight: number; baseReplicas: number; weight: number };
  /** For a scale-up: when the pool first reported the replicas asked for (their load is visible a window later). */
  readyNs?: bigint;
}

/** What Governor believes is in effect on the fleet (set by applied actions). */
export interface ActuatedState {
  replicas: Record<string, number>;
  weights: Record<string, Record<string, number>>;
  /**
   * Per model, after traffic was taken from faulty pools: the weights before the incident and the
   * pools still to be given their share back (traffic recovery works through them, then forgets).
   */
  recovery: Record<string, { baseline: Record<string, number>; pools: string[] }>;
  /**
   * When a shift last gave each pool a much bigger share of its model's traffic (at least
   * SHARE_GAIN_RATIO × its weight before): until a window has passed its signals do not show that load.
   */
  gainedNs: Record<string, bigint>;
  circuits: Record<string, { open: boolean; untilNs: bigint | null }>;
  shed: Record<string, number | null>;
  retryBudget: Record<string, number | null>;
  downgrade: Record<string, { toModel: string; fraction: number }>;
}

/**
 * Learned per pool from its own healthy history. The three capacities (peak, saturated, calm rate per
 * replica) are decaying maxima: they fade with CAPACITY_HALF_LIFE_S unless seen again (update-learning.ts).
 */
export interface PoolLearning {
  /** The highest completed requests/s per serving replica seen (healthy ticks): a lower bound of capacity. */
  peakRatePerReplica: number | null;
  /**
   * The most requests/s per serving replica the pool completed (healthy ticks, and no more than over
   * the control window) while saturated — the median request queued for admission, or prefill per
   * token took at least slowRatio × its idle time at more load per replica than it ever carried
   * calmly (chunked prefill admits at once and slows every prompt instead). Null until it has been
   * saturated; from then on the peak rate is its capacity for scaling, and this the cautious one for
   * moving an incident's traffic onto it (see learnedCapacity).
   */
  saturatedRatePerReplica: number | null;
  /**
   * The highest requests/s per serving replica the pool has served calmly (no queueing, prefill at
   * its uncontended speed): a load it is known to carry within the SLO.
   */
  calmRatePerReplica: number | null;
  /**
   * Share of requests within the SLO while the pool was calm (EWMA): what the prompts' own prefill
   * allows, so the most a scale-up can win back.
   */
  calmGoodput: number | null;
  /** Engine speed while healthy (EWMA): prefill ms per prompt token, else e2e p50 − queue p50. */
  speedBaseline: number | null;
  /** Prefill ms per prompt token when not contended: follows lower values at once, higher ones slowly. */
  prefillFloorMsPerToken: number | null;
  /** The fastest tenth of long-prompt requests' prefill ms per token while healthy: same rule as the floor. */
  fastestPrefillFloorMsPerToken: number | null;
  /** Busy time of its engines as a function of their work, from healthy windows (fit-engine-time.ts). */
  engineFit: EngineTimeFit | null;
  /** When its engines last read slow for their work while it was an outlier (a slow GPU). */
  engineSlowAtNs: bigint | null;
  /**
   * When it last had replicas but none serving (all lost, or dark in a region outage while its peers
   * report): its requests went around it, so its silence then says nothing about its traffic.
   */
  darkAtNs: bigint | null;
  /** Requests/s per serving replica while that baseline was learned (EWMA). */
  loadBaselinePerReplicaPerS: number | null;
  healthySamples: number;
  /** Event time the learned capacities above were last decayed to (CAPACITY_HALF_LIFE_S). */
  capacitiesAtNs: bigint | null;
  /** Consecutive ticks the pool was an outlier against its peers. */
  outlierStreak: number;
}

/** Everything a tick reads and changes; cloned for dry-run ticks. */
export interface ControlState {
  open: Map<string, RecommendationRecord>;
  memory: Map<MemoryKey, TargetMemory>;
  actuated: ActuatedState;
  learning: Map<string, PoolLearning>;
  /** Event times (ns) of auto-applied actions per policy, for max_actions_per_hour. */
  autoApplied: Map<string, bigint[]>;
  /** Recently rejected (kind, target, direction) → rejection time (ns). */
  rejected: Map<DecisionKey, bigint>;
  /** Actions decided outside a tick (human apply) that the next evaluate response hands out. */
  outbox: ControlAction[];
  lastTickNs: bigint | null;
  /**
   * Where the store's telemetry begins (its oldest span): a control window reaching further back
   * covers less than its length. Read again at each tick until the window lies inside it.
   */
  telemetryFromNs: bigint | null;
  /** Replicas each pool reported at the last tick, to notice scaling Governor did not do. */
  observedReplicas: Record<string, number>;
  /**
   * (kind, target, direction) of candidates a guard holds back → the rule, so a hold is audited
   * when it starts (or its rule changes), not at every tick it lasts.
   */
  holds: Map<DecisionKey, HoldRule>;
}

export function createEmptyState(): ControlState {
  return {
    open: new Map(),
    memory: new Map(),
    actuated: {
      replicas: {},
      weights: {},
      recovery: {},
      gainedNs: {},
      circuits: {},
      shed: {},
      retryBudget: {},
      downgrade: {},
    },
    learning: new Map(),
    autoApplied: new Map(),
    rejected: new Map(),
    outbox: [],
    lastTickNs: null,
    telemetryFromNs: null,
    observedReplicas: {},
    holds: new Map(),
  };
}
