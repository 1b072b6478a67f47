export { createControlEngine } from './engine/create-control-engine.ts';
export type {
  ControlEngine,
  ControlEngineOptions,
  ControlEvent,
  ControlFailure,
  ControlResult,
  EvaluateResult,
  PoliciesView,
} from './engine/create-control-engine.ts';
export type { AuditView } from './engine/to-api.ts';
export { DEFAULT_TUNING } from './engine/control-tuning.ts';
export type { ControlTuning } from './engine/control-tuning.ts';
export type { SignalsReader, SnapshotQuery } from './signals-reader.ts';
export { createReadyReplicasReader } from './read-ready-replicas.ts';
export { createEngineWorkReader, type EngineWork, type EngineWorkReader } from './read-engine-work.ts';
export {
  MAX_ARRIVALS_PER_POOL,
  createRequestArrivalsReader,
  type RequestArrival,
  type RequestArrivalsReader,
} from './read-request-arrivals.ts';
export {
  createPrefillSpeedReader,
  type PrefillSpeed,
  type PrefillSpeedReader,
} from './read-prefill-speed.ts';
export { createDuckDbRepository } from './state/create-duckdb-repository.ts';
export { createMemoryRepository } from './state/create-memory-repository.ts';
export type { ControlRepository } from './state/control-repository.ts';
export { createActuatorsFromConfig } from './actuators/create-actuators-from-config.ts';
export { createHttpActuator } from './actuators/create-http-actuator.ts';
export { createKubernetesActuator } from './actuators/kubernetes/create-kubernetes-actuator.ts';
export { createDeliveryQueue } from './actuators/create-delivery-queue.ts';
export type { DeliveryOutcome, DeliveryQueue, QueuedActuator } from './actuators/create-delivery-queue.ts';
export type { Actuator } from './actuators/actuator.ts';
export { matchesTargetPattern, formatTargetKey } from './target-key.ts';
export { gateCandidate } from './engine/gate-candidate.ts';
export type { GateDecision } from './engine/gate-candidate.ts';
export { runBacktest } from './run-backtest.ts';
export type { BacktestEntry, BacktestOptions, BacktestReport } from './run-backtest.ts';
export { isoToNs, nsToIso } from './time.ts';
