import { ATTRIBUTION_HOP_KEYS } from '@governor/conventions';
import type {
  UtilizationBound,
  GroupDimension,
  HopLatency,
  Percentiles,
  SignalGroup,
  SignalsSnapshot,
} from '@governor/conventions';

/** Hop keys in hop attribution; defined in conventions so the console shares them. */
export const HOP_KEYS = ATTRIBUTION_HOP_KEYS;
export type HopKey = (typeof HOP_KEYS)[number];

/** Which way utilizationRatio leans (UTILIZATION_BOUNDS in @governor/conventions, docs/sql.md). */
export type { UtilizationBound } from '@governor/conventions';

/** A SignalGroup plus the supporting figures Governor computes alongside it. */
export interface SignalGroupDetail extends SignalGroup {
  hops: Partial<Record<HopKey, HopLatency>>;
  preemptionRate: number | null;
  queueDepth: number | null;
  /** Generated (output) tokens per second. */
  tokensPerS: number | null;
  /** Per task: first request start → last request end. */
  taskE2eMs: Percentiles;
  /** Tasks that succeeded and met the SLO on every final attempt. */
  goodTasks: number;
  /** Tasks that stopped before all declared workflow steps were seen (counted as failed). */
  abandonedTasks: number;
  /** Incomplete tasks that ended within the lateness of the newest event; not counted yet. */
  pendingTasks: number;
  retries: number;
  utilizationBound: UtilizationBound | null;
  /** Peak tokens/s per replica used for computeUtil: configured, else learned. */
  peakTokensPerSPerReplica: number | null;
}

export interface SignalsSnapshotDetail extends SignalsSnapshot {
  groups: SignalGroupDetail[];
}

export type GroupKey = Partial<Record<GroupDimension, string | number | null>>;
