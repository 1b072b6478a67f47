import { parseGovernorConfig } from '@governor/conventions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningAlertmanager, startAlertmanager } from '../test/alertmanager-process.ts';
import { eventually } from '../test/eventually.ts';
import { createScriptedSignals } from '../test/scripted-signals.ts';
import { signalGroup } from '../test/signal-fixtures.ts';
import { createTempStore } from '../test/temp-store.ts';
import { createAlertEngine } from './create-alert-engine.ts';

// Governor pushing to a real Prometheus Alertmanager through its v2 API. Alertmanager compares
// endsAt with its own clock, so this test runs on the real wall clock and on event times just
// behind it, as a live deployment does.

const S = 1_000_000_000n;
let alertmanager: RunningAlertmanager;

beforeAll(async () => {
  alertmanager = await startAlertmanager();
});
afterAll(async () => {
  await alertmanager?.stop();
});

describe('alertmanager receiver', () => {
  it('shows the alert in Alertmanager while it fires and clears it once resolved', async () => {
    const temp = await createTempStore();
    const signals = createScriptedSignals();
    const parsed = parseGovernorConfig({
      receivers: [{ name: 'am', type: 'alertmanager', url: alertmanager.url }],
      alerts: {
        evaluation_interval_s: 15,
        rules: [
          {
            name: 'ttft-slo',
            signal: 'ttftMs.p95',
            by: ['pool'],
            threshold: 2000,
            severity: 'page',
            receivers: ['am'],
            annotations: { runbook: 'https://runbooks.example/ttft' },
          },
        ],
      },
    });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const engine = await createAlertEngine({
      store: temp.store,
      signals: signals.source,
      config: parsed.config,
    });
    try {
      const t0 = ((BigInt(Date.now()) * 1_000_000n) / (15n * S)) * 15n * S - 120n * S;
      signals.setGroups([
        signalGroup({ pool: 'a' }, { ttftMs: { p50: 900, p95: 2500, p99: 3100 } }),
        signalGroup({ pool: 'b' }, { ttftMs: { p50: 300, p95: 600, p99: 700 } }),
      ]);
      signals.setWatermark(t0);
      await engine.evaluate();
      const fingerprintInGovernor = engine.activeAlerts()[0]!.fingerprint;

      const [held] = await eventually(
        () => alertmanager.alerts(),
        (alerts) => alerts.length === 1,
        { what: 'the alert to arrive in Alertmanager' },
      );
      expect(held!.labels).toEqual({ alertname: 'ttft-slo', pool: 'a', severity: 'page' });
      expect(Date.parse(held!.startsAt)).toBe(Number(t0 / 1_000_000n));
      expect(Date.parse(held!.endsAt)).toBeGreaterThan(Date.now());

      signals.setGroups([signalGroup({ pool: 'a' }, { ttftMs: { p50: 300, p95: 700, p99: 800 } })]);
      signals.setWatermark(t0 + 15n * S);
      await engine.evaluate();
      await eventually(
        () => alertmanager.alerts(),
        (alerts) => alerts.length === 0,
        { what: 'Alertmanager to drop the resolved alert' },
      );
      const deliveries = await eventually(
        () => engine.deliveriesForAlert(fingerprintInGovernor, 10),
        (d) => d.every((x) => x.record.status !== 'pending'),
        { what: 'the delivery log to record both deliveries' },
      );
      expect(deliveries.map((d) => [d.record.notificationStatus, d.record.status])).toEqual([
        ['resolved', 'delivered'],
        ['firing', 'delivered'],
      ]);
    } finally {
      await engine.stop();
      await temp.dispose();
    }
  });
});
