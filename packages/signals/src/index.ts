export { createSignals, MAX_SERIES_POINTS } from './create-signals.ts';
export type {
  Signals,
  SignalsOptions,
  SignalsSource,
  SnapshotOptions,
  SeriesOptions,
  SeriesPoint,
  SeriesResult,
} from './create-signals.ts';
export { readSignalValue, isSignalPath, SIGNAL_PATHS } from './read-signal-value.ts';
export { HOP_KEYS } from './signal-group.ts';
export type { HopKey, SignalGroupDetail, SignalsSnapshotDetail, UtilizationBound, GroupKey } from './signal-group.ts';
export type { RefreshResult } from './rollup/refresh-request-facts.ts';
export { formatDurationMs, nsToRfc3339 } from './format-duration.ts';
