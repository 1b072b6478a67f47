import type { AlertsConfig, ReceiverConfig, ReceiverType } from '@governor/conventions';
import type { ReceiverTimings } from '../dispatch/notification-dispatcher.ts';
import type { AlertConfigIssue } from '../rules/compile-rules.ts';

/** A receiver ready to send to: secret resolved, grouping settled. */
export interface ReceiverRuntime {
  name: string;
  type: ReceiverType;
  url: string;
  secret: string | null;
  timeoutMs: number;
  headers: Record<string, string>;
  timings: ReceiverTimings;
}

// Alertmanager does its own grouping and auto-resolves alerts it has not heard about, so Governor
// pushes changes at once and re-sends firing alerts every minute (as Prometheus does).
const ALERTMANAGER_RESEND_MS = 60_000;

export function compileReceivers(
  receivers: readonly ReceiverConfig[],
  alerts: Pick<AlertsConfig, 'group_by' | 'group_wait_s' | 'group_interval_s' | 'repeat_interval_s'>,
  env: Record<string, string | undefined>,
): { receivers: Map<string, ReceiverRuntime>; issues: AlertConfigIssue[] } {
  const issues: AlertConfigIssue[] = [];
  const out = new Map<string, ReceiverRuntime>();
  receivers.forEach((r, index) => {
    const path = `receivers.${index}`;
    if (out.has(r.name))
      issues.push({ path: `${path}.name`, message: `receiver name "${r.name}" is used twice` });
    let secret = r.secret ?? null;
    if (r.secret_env) {
      const fromEnv = env[r.secret_env];
      if (fromEnv) secret = fromEnv;
      else
        issues.push({
          path: `${path}.secret_env`,
          message: `environment variable ${r.secret_env} is not set`,
        });
    }
    const isAlertmanager = r.type === 'alertmanager';
    out.set(r.name, {
      name: r.name,
      type: r.type,
      url:
        isAlertmanager && !/\/api\/v2\/alerts\/?$/.test(r.url)
          ? `${r.url.replace(/\/+$/, '')}/api/v2/alerts`
          : r.url,
      secret,
      timeoutMs: r.timeout_ms,
      headers: r.headers,
      timings: {
        groupBy: r.group_by ?? alerts.group_by,
        groupWaitMs: (r.group_wait_s ?? (isAlertmanager ? 0 : alerts.group_wait_s)) * 1000,
        groupIntervalMs: (r.group_interval_s ?? (isAlertmanager ? 0 : alerts.group_interval_s)) * 1000,
        repeatIntervalMs: r.repeat_interval_s
          ? r.repeat_interval_s * 1000
          : isAlertmanager
            ? ALERTMANAGER_RESEND_MS
            : alerts.repeat_interval_s * 1000,
        sendResolved: r.send_resolved,
        maxAlerts: r.max_alerts,
      },
    });
  });
  return { receivers: out, issues };
}
