export { createAlertEngine, AlertConfigError } from './create-alert-engine.ts';
export type {
  AlertEngine,
  AlertEngineOptions,
  AlertEngineLogger,
  AlertEngineEvent,
  EvaluationSummary,
  DeliveryWithAttempts,
} from './create-alert-engine.ts';
export type { AlertSignalsSource, ReadSignalValue } from './signals-source.ts';
export { recommendationToAlertEvent, controlActionToAlertEvent } from './alert-event.ts';
export type { AlertSourceEvent } from './alert-event.ts';
export { ALERT_STATES, advanceAlert } from './alert-instance.ts';
export type {
  AlertInstance,
  AlertState,
  AlertChange,
  AlertStep,
  ConditionObservation,
} from './alert-instance.ts';
export { fingerprintLabels } from './labels.ts';
export type { Labels } from './labels.ts';
export { compileRules } from './rules/compile-rules.ts';
export type { AlertConfigIssue } from './rules/compile-rules.ts';
export type { CompiledRule } from './rules/compiled-rule.ts';
export { buildAlertmanagerWebhookPayload } from './delivery/alertmanager-webhook-payload.ts';
export type { AlertmanagerWebhookPayload } from './delivery/alertmanager-webhook-payload.ts';
export { attemptOutcome } from './persistence/delivery-log.ts';
export { migratePostgresAlertState } from './persistence/create-postgres-alert-repository.ts';
export type { AlertStateOptions } from './persistence/open-alert-state.ts';
export type { PostgresQueryable } from './persistence/postgres-queryable.ts';
export type { AttemptOutcome } from './persistence/delivery-log.ts';
export type { SendFn } from './delivery/delivery-queue.ts';
export type { ReceiverRuntime } from './delivery/receiver-runtime.ts';
export type { Notification, NotifiedAlert, NotificationStatus } from './dispatch/notification.ts';
export type {
  DeliveryRecord,
  DeliveryAttemptRecord,
  DeliveryStatus,
  DeliveryKind,
} from './persistence/delivery-log.ts';
export { toAlertView, toDeliveryView, toReceiverView } from './views.ts';
