export { createSignals, MAX_SERIES_POINTS } from './create-signals.ts';
export type { ClickHouseSignalsSource } from './create-signals.ts';
export { createClickHouseRollup } from './rollup/roll-up-on-clickhouse.ts';
export type { ClickHouseRollup, ClickHouseRollupResult } from './rollup/roll-up-on-clickhouse.ts';
export { startClickHouseRollupLoop } from './rollup/clickhouse-rollup-loop.ts';
export type { ClickHouseRollupLoop } from './rollup/clickhouse-rollup-loop.ts';
export type { SqlReader } from './sql-reader.ts';
export type {
  Signals,
  SignalsOptions,
  SignalsSource,
  SnapshotOptions,
  SeriesOptions,
  SeriesPoint,
  SeriesResult,
  TaskQuery,
} from './create-signals.ts';
export { readSignalValue } from './read-signal-value.ts';
export type { SignalsReader, SnapshotQuery } from './control-readers/signals-reader.ts';
export {
  createReadyReplicasReader,
  type ReadyReplicasReader,
} from './control-readers/read-ready-replicas.ts';
export {
  createEngineWorkReader,
  type EngineWork,
  type EngineWorkReader,
} from './control-readers/read-engine-work.ts';
export {
  MAX_ARRIVALS_PER_POOL,
  createRequestArrivalsReader,
  type RequestArrival,
  type RequestArrivalsReader,
} from './control-readers/read-request-arrivals.ts';
export {
  createPrefillSpeedReader,
  type PrefillSpeed,
  type PrefillSpeedReader,
} from './control-readers/read-prefill-speed.ts';
export { HOP_KEYS } from './signal-group.ts';
export type {
  HopKey,
  SignalGroupDetail,
  SignalsSnapshotDetail,
  UtilizationBound,
  GroupKey,
} from './signal-group.ts';
export type { RefreshResult, RefreshStep, RollupLag } from './rollup/refresh-request-facts.ts';
export { REFRESH_STEPS } from './rollup/refresh-request-facts.ts';
export { formatDurationMs, nsToRfc3339 } from './format-duration.ts';
export { TASK_STATUSES } from './tasks/tasks.ts';
export type { TaskStatus, TaskSummary, TaskAttempt } from './tasks/tasks.ts';
export type { TraceSearch, TraceSummary, TraceWaterfall, WaterfallSpan } from './traces/traces.ts';
export { createPrometheusText, escapeLabelValue } from './prometheus/prometheus-text.ts';
export type {
  PrometheusText,
  PrometheusFamily,
  PrometheusType,
  PrometheusSuffix,
} from './prometheus/prometheus-text.ts';
export { renderSignalsMetrics } from './prometheus/render-signals-metrics.ts';
export { startBackgroundRefresh } from './rollup/background-refresh.ts';
export type { BackgroundRefresh } from './rollup/background-refresh.ts';
export { createRepairSweep, repairClickHouseRollup } from './rollup/clickhouse-repair-sweep.ts';
export type { RepairRange, RepairResult, RepairSweep } from './rollup/clickhouse-repair-sweep.ts';
