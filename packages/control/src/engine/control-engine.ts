import type {
  ControlAction,
  GovernorConfig,
  PolicyConfig,
  Recommendation,
  RecommendationState,
} from '@governor/conventions';
import type {
  EngineWorkReader,
  PrefillSpeedReader,
  ReadyReplicasReader,
  RequestArrivalsReader,
  SignalsReader,
} from '@governor/signals';
import type { QueuedActuator } from '../actuators/create-delivery-queue.ts';
import type { ControlRepository } from '../state/control-repository.ts';
import type { ControlTuning } from './control-tuning.ts';
import type { PoliciesView } from './persistence.ts';
import type { EvaluateResult } from './run-tick.ts';
import type { ControlEvent } from './tick-output.ts';
import type { AuditView } from './to-api.ts';

// The control engine's interface: what createControlEngine takes and what it answers.

export type { ControlEvent, EvaluateResult, PoliciesView };

export interface ControlEngineOptions {
  config: GovernorConfig;
  signals: SignalsReader;
  repository: ControlRepository;
  /** Ready replicas per pool (see createReadyReplicasReader); without it, cold starts are waited out by time. */
  readReadyReplicas?: ReadyReplicasReader;
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
  /**
   * Send again the applied actions whose delivery outcome is not in the audit log (a leader taking
   * over from one that died mid-delivery; default false).
   */
  resumeDeliveries?: boolean;
}

export type ControlFailure =
  | { ok: false; code: 'not_found'; message: string }
  | { ok: false; code: 'invalid_transition'; message: string }
  | { ok: false; code: 'disabled'; message: string }
  | { ok: false; code: 'time_reversed'; message: string }
  | { ok: false; code: 'time_ahead'; message: string }
  /** Several nodes share the state (store.engine: clickhouse) and another one runs the loop. */
  | { ok: false; code: 'not_leader'; message: string };

export type ControlResult<T> = ({ ok: true } & T) | ControlFailure;

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
