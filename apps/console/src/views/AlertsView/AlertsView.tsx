import { useState } from 'react';
import {
  fetchAlerts,
  fetchDeadLetters,
  fetchDeliveries,
  fetchReceivers,
  testReceiver,
} from '../../api/alerts.ts';
import { AlertTable } from '../../components/AlertTable/index.ts';
import { DeliveryTable } from '../../components/DeliveryTable/index.ts';
import { Panel } from '../../components/Panel/index.ts';
import { AsyncContent, EmptyState } from '../../components/StateView/index.ts';
import { formatDateTime } from '../../lib/format.ts';
import { useApi } from '../../lib/use-api.ts';

export function AlertsView() {
  const alerts = useApi('alerts', (signal) => fetchAlerts(signal));
  const deliveries = useApi('deliveries', (signal) => fetchDeliveries(signal));
  const deadLetters = useApi('dead-letters', (signal) => fetchDeadLetters(signal));
  const receivers = useApi('receivers', (signal) => fetchReceivers(signal));
  const [testResult, setTestResult] = useState<Record<string, string>>({});

  async function sendTest(name: string) {
    setTestResult((r) => ({ ...r, [name]: 'sending…' }));
    try {
      const result = await testReceiver(name);
      const detail =
        result.outcome === 'ok'
          ? `delivered${result.httpStatus ? ` (HTTP ${result.httpStatus})` : ''}`
          : `${result.outcome}: ${result.error ?? `HTTP ${result.httpStatus}`}`;
      setTestResult((r) => ({ ...r, [name]: detail }));
      deliveries.reload();
      deadLetters.reload();
    } catch (error) {
      setTestResult((r) => ({ ...r, [name]: `failed: ${(error as Error).message}` }));
    }
  }

  return (
    <div className="view" data-testid="view-alerts">
      <Panel
        title="Firing"
        subtitle={
          alerts.data?.evaluatedAt
            ? `pending and firing · evaluated up to ${formatDateTime(alerts.data.evaluatedAt)}`
            : 'pending and firing alerts'
        }
        testId="alerts-firing"
      >
        <AsyncContent
          state={alerts}
          isEmpty={(d) => d.active.length === 0}
          empty={<EmptyState title="No alerts are firing" />}
        >
          {(data) => <AlertTable alerts={data.active} />}
        </AsyncContent>
      </Panel>
      <Panel title="History" subtitle="resolved alerts, newest first" testId="alerts-history">
        <AsyncContent
          state={alerts}
          isEmpty={(d) => d.history.length === 0}
          empty={<EmptyState title="No resolved alerts yet" />}
        >
          {(data) => <AlertTable history alerts={data.history} />}
        </AsyncContent>
      </Panel>
      <div className="grid grid--2">
        <Panel
          title="Deliveries"
          subtitle="webhook and Alertmanager notifications"
          testId="alerts-deliveries"
        >
          <AsyncContent
            state={deliveries}
            isEmpty={(d) => d.length === 0}
            empty={<EmptyState title="No deliveries yet" />}
          >
            {(data) => <DeliveryTable deliveries={data} testId="delivery-table" />}
          </AsyncContent>
        </Panel>
        <Panel
          title="Dead letters"
          subtitle="notifications that ran out of retries"
          testId="alerts-dead-letters"
        >
          <AsyncContent
            state={deadLetters}
            isEmpty={(d) => d.length === 0}
            empty={
              <EmptyState title="No dead letters">
                Every notification was delivered or is still retrying.
              </EmptyState>
            }
          >
            {(data) => <DeliveryTable deliveries={data} testId="dead-letter-table" />}
          </AsyncContent>
        </Panel>
      </div>
      <Panel
        title="Receivers"
        subtitle="from the config's receivers; send a test notification"
        testId="alerts-receivers"
      >
        <AsyncContent
          state={receivers}
          isEmpty={(d) => d.length === 0}
          empty={
            <EmptyState title="No receivers configured">
              Add webhook or Alertmanager receivers under <code>receivers</code> in the config.
            </EmptyState>
          }
        >
          {(data) => (
            <ul className="receiver-list">
              {data.map((r) => (
                <li key={r.name}>
                  <strong>{r.name}</strong>{' '}
                  <span className="muted">
                    {r.type} · {r.url}
                  </span>
                  <button type="button" className="button button--small" onClick={() => sendTest(r.name)}>
                    Send test
                  </button>
                  {testResult[r.name] ? (
                    <span className="muted" role="status">
                      {testResult[r.name]}
                    </span>
                  ) : null}
                </li>
              ))}
            </ul>
          )}
        </AsyncContent>
      </Panel>
    </div>
  );
}
