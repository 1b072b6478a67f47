export { runSimulation } from './run-simulation.ts';
export type { SimulationOptions, RunProgress } from './run-simulation.ts';
export { runSimCli, parseSimArgs, SIM_USAGE } from './cli/run-sim-cli.ts';
export type { ParsedSimArgs } from './cli/run-sim-cli.ts';
export type {
  RunSummary,
  PoolSummary,
  FaultGroundTruth,
  TelemetrySummary,
  LockstepSummary,
} from './summary/run-summary.ts';
export type { Percentiles } from './summary/percentiles.ts';
export { formatSummaryTable } from './summary/format-summary-table.ts';
export { WORKLOAD_NAMES, isWorkloadName, createWorkload } from './workload/create-workload.ts';
export type { WorkloadName } from './workload/create-workload.ts';
export type {
  Workload,
  WorkloadTask,
  WorkloadStep,
  WorkflowType,
  ArrivalShape,
} from './workload/workload-types.ts';
export { resolveDataDir } from './workload/read-data-file.ts';
export { SCENARIO_NAMES, isScenarioName, planScenario } from './faults/fault-plan.ts';
export type { ScenarioName, FaultKind, FaultSpec, FaultTarget } from './faults/fault-plan.ts';
export { POLICY_NAMES, isPolicyName } from './policies/create-policy.ts';
export {
  ORACLE_TARGET_UTILIZATIONS,
  findOracleAtGoodput,
  runHindsightOracle,
} from './oracle/run-hindsight-oracle.ts';
export type { OraclePoint } from './oracle/run-hindsight-oracle.ts';
export { planOracleSchedule, computeScheduleCostUsd } from './oracle/plan-oracle-schedule.ts';
export type { OracleSchedule, PoolSchedule, OracleScheduleOptions } from './oracle/plan-oracle-schedule.ts';
export type { PolicyName } from './policies/create-policy.ts';
export {
  createDefaultFleet,
  buildPoolSpec,
  parseFleetSpec,
  MODEL_8B,
  MODEL_70B,
} from './fleet/fleet-spec.ts';
export type { FleetSpec, PoolSpec, PoolSpecInput } from './fleet/fleet-spec.ts';
export { computeStepMs, computeIsolatedTtftMs, findStepModel } from './fleet/step-time-model.ts';
export type { StepTimeModel } from './fleet/step-time-model.ts';
export { OTLP_PROTOCOLS } from './telemetry/create-telemetry.ts';
export type { OtlpProtocol } from './telemetry/create-telemetry.ts';
export type { FleetState } from './control/describe-fleet-state.ts';
export type { ApplyResult, ApplyStatus } from './control/apply-control-action.ts';
