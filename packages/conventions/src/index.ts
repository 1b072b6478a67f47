export { Attr, Metric, OUTCOMES, isOutcome } from './attributes.ts';
export type { Outcome } from './attributes.ts';
export { HOPS, isHop, DEFAULT_HOP_RULES } from './hops.ts';
export type { Hop, HopRule } from './hops.ts';
export { parseDurationMs } from './duration.ts';
export { BYTE_SIZE_UNITS, parseByteSize } from './byte-size.ts';
export {
  GovernorConfig,
  ServerConfig,
  PoolConfig,
  PricingConfig,
  SloConfig,
  SignalsConfig,
  SamplingConfig,
  HopRuleConfig,
  AuthToken,
  AuthConfig,
  RetentionConfig,
  IngestConfig,
  maxAcceptedEventNs,
  maxRollupLagMs,
  DEFAULT_DUCKDB_MEMORY_LIMIT,
  parseGovernorConfig,
} from './config/config.ts';
export type { ConfigIssue } from './config/config.ts';
export {
  StoreConfig,
  ClickHouseStoreConfig,
  PostgresStoreConfig,
  clickHouseStoreOf,
} from './config/store-config.ts';
export {
  ControlConfig,
  PolicyConfig,
  ActuatorConfig,
  RECOMMENDATION_KINDS,
} from './config/control-config.ts';
export type { RecommendationKind } from './config/control-config.ts';
export {
  AlertsConfig,
  AlertRuleConfig,
  ThresholdAlertRuleConfig,
  BurnRateAlertRuleConfig,
  BurnRateWindowConfig,
  EventAlertRuleConfig,
  AlertDeliveryConfig,
  ReceiverConfig,
  THRESHOLD_OPS,
  ALERT_EVENT_SOURCES,
  RECEIVER_TYPES,
  DEFAULT_BURN_RATE_WINDOWS,
} from './config/alerts-config.ts';
export type { ThresholdOp, AlertEventSource, ReceiverType } from './config/alerts-config.ts';
export {
  GROUP_DIMENSIONS,
  ATTRIBUTION_HOP_KEYS,
  MAX_SIGNAL_GROUPS,
  UTILIZATION_BOUNDS,
  classifyUtilizationRatio,
} from './api/signals.ts';
export type { UtilizationBound } from './api/signals.ts';
export { SIGNAL_PATHS, isSignalPath } from './api/signal-paths.ts';
export type {
  Percentiles,
  HopLatency,
  GroupDimension,
  AttributionHopKey,
  SignalGroup,
  SignalsSnapshot,
} from './api/signals.ts';
export { HOLD_RULES, RECOMMENDATION_STATES } from './api/recommendation.ts';
export type {
  Recommendation,
  RecommendationActions,
  RecommendationState,
  RecommendationTarget,
  RecommendationVerification,
  RecommendationHold,
  HoldRule,
  Evidence,
} from './api/recommendation.ts';
export { IMPACT_MEASURES, isImpactMeasure } from './api/expected-impact.ts';
export type {
  ExpectedImpact,
  ImpactChange,
  ImpactMeasure,
  PredictedAfter,
  WeightChange,
} from './api/expected-impact.ts';
export type {
  ActionByKind,
  KindAction,
  ControlAction,
  EvaluateResponse,
  ScaleAction,
  ShiftTrafficAction,
  CircuitBreakAction,
  ShedLoadAction,
  RetryBudgetAction,
  DowngradeModelAction,
} from './api/control-action.ts';
export {
  Dashboard,
  DashboardPanel,
  DashboardsConfig,
  PanelQuery,
  PanelOptions,
  SqlPanelQuery,
  SignalPanelQuery,
  CHART_TYPES,
  DASHBOARD_ID_PATTERN,
  parseDashboard,
} from './dashboard.ts';
export type {
  ChartType,
  DashboardSummary,
  DashboardFileIssue,
  DashboardList,
  DashboardWithId,
} from './dashboard.ts';
export type {
  AlertView,
  AlertViewState,
  AlertsResponse,
  DeliveryView,
  DeliveryAttemptView,
  ReceiverView,
  ReceiverTestResponse,
} from './api/alerts.ts';
export type {
  StorageResponse,
  StorageStats,
  TableStorage,
  ExportStorage,
  RetentionRunSummary,
} from './api/storage.ts';
export { quantileCont, quantileContOfSorted } from './quantile-cont.ts';
