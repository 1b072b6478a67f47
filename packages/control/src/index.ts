export { createControlEngine } from './engine/create-control-engine.ts';
export type {
  ControlEngine,
  ControlEngineOptions,
  ControlEvent,
  ControlFailure,
  ControlResult,
  EvaluateResult,
  PoliciesView,
} from './engine/control-engine.ts';
export type { AuditView } from './engine/to-api.ts';
export { DEFAULT_TUNING } from './engine/control-tuning.ts';
export type { ControlTuning } from './engine/control-tuning.ts';
// The readers live in @governor/signals (data walks store → signals → control); named here too
// because the engine's options take them.
export {
  MAX_ARRIVALS_PER_POOL,
  createEngineWorkReader,
  createPrefillSpeedReader,
  createReadyReplicasReader,
  createRequestArrivalsReader,
} from '@governor/signals';
export type {
  EngineWork,
  EngineWorkReader,
  PrefillSpeed,
  PrefillSpeedReader,
  ReadyReplicasReader,
  RequestArrival,
  RequestArrivalsReader,
  SignalsReader,
  SnapshotQuery,
} from '@governor/signals';
export { createDuckDbRepository } from './state/create-duckdb-repository.ts';
export { createMemoryRepository } from './state/create-memory-repository.ts';
export {
  createPostgresRepository,
  migratePostgresControlState,
  type PostgresQueryable,
} from './state/create-postgres-repository.ts';
export type { ControlRepository } from './state/control-repository.ts';
export {
  createDuckDbRollbackStore,
  createMemoryRollbackStore,
  createPostgresRollbackStore,
  type RollbackStore,
  type RollbackValue,
} from './state/rollback-store.ts';
export { createActuatorsFromConfig } from './actuators/create-actuators-from-config.ts';
export { createHttpActuator } from './actuators/create-http-actuator.ts';
export { createKubernetesActuator } from './actuators/kubernetes/create-kubernetes-actuator.ts';
export { createDeliveryQueue } from './actuators/create-delivery-queue.ts';
export type { DeliveryOutcome, DeliveryQueue, QueuedActuator } from './actuators/create-delivery-queue.ts';
export type { Actuator } from './actuators/actuator.ts';
export { matchesTargetPattern, formatTargetKey } from './target-key.ts';
export { gateCandidate } from './engine/gate-candidate.ts';
export { previousOf } from './engine/kind-action.ts';
export type { GateDecision } from './engine/gate-candidate.ts';
export { runBacktest } from './run-backtest.ts';
export type { BacktestEntry, BacktestOptions, BacktestReport } from './run-backtest.ts';
export { isoToNs, nsToIso } from './time.ts';
