import { describe, expect, it } from 'vitest';
import type { Notification } from '../dispatch/notification.ts';
import { buildAlertmanagerApiAlerts } from './alertmanager-api-alerts.ts';
import { buildAlertmanagerWebhookPayload } from './alertmanager-webhook-payload.ts';
import { buildSlackMessage } from './slack-message.ts';

const notification: Notification = {
  receiver: 'ops',
  groupKey: 'governor/ops:{alertname="ttft-slo"}',
  groupLabels: { alertname: 'ttft-slo' },
  status: 'firing',
  truncatedAlerts: 0,
  externalUrl: 'http://governor:4318',
  at: '2026-01-01T00:05:00.000Z',
  alerts: [
    {
      fingerprint: 'aaaaaaaaaaaaaaaa',
      status: 'firing',
      labels: { alertname: 'ttft-slo', pool: 'a', severity: 'page' },
      annotations: { summary: 'a slow', runbook: 'r' },
      startsAt: '2026-01-01T00:01:00.000Z',
      endsAt: null,
      generatorUrl: 'http://governor:4318/api/alerts?fingerprint=aaaaaaaaaaaaaaaa',
      value: 2500,
    },
    {
      fingerprint: 'bbbbbbbbbbbbbbbb',
      status: 'resolved',
      labels: { alertname: 'ttft-slo', pool: 'b', severity: 'page' },
      annotations: { summary: 'b slow', runbook: 'r' },
      startsAt: '2026-01-01T00:00:00.000Z',
      endsAt: '2026-01-01T00:04:00.000Z',
      generatorUrl: 'http://governor:4318/api/alerts?fingerprint=bbbbbbbbbbbbbbbb',
      value: 2100,
    },
  ],
};

describe('Alertmanager webhook payload', () => {
  it('has every field of version 4', () => {
    expect(buildAlertmanagerWebhookPayload(notification)).toEqual({
      version: '4',
      groupKey: 'governor/ops:{alertname="ttft-slo"}',
      truncatedAlerts: 0,
      status: 'firing',
      receiver: 'ops',
      groupLabels: { alertname: 'ttft-slo' },
      commonLabels: { alertname: 'ttft-slo', severity: 'page' },
      commonAnnotations: { runbook: 'r' },
      externalURL: 'http://governor:4318',
      alerts: [
        {
          status: 'firing',
          labels: { alertname: 'ttft-slo', pool: 'a', severity: 'page' },
          annotations: { summary: 'a slow', runbook: 'r' },
          startsAt: '2026-01-01T00:01:00.000Z',
          endsAt: '0001-01-01T00:00:00Z',
          generatorURL: 'http://governor:4318/api/alerts?fingerprint=aaaaaaaaaaaaaaaa',
          fingerprint: 'aaaaaaaaaaaaaaaa',
        },
        {
          status: 'resolved',
          labels: { alertname: 'ttft-slo', pool: 'b', severity: 'page' },
          annotations: { summary: 'b slow', runbook: 'r' },
          startsAt: '2026-01-01T00:00:00.000Z',
          endsAt: '2026-01-01T00:04:00.000Z',
          generatorURL: 'http://governor:4318/api/alerts?fingerprint=bbbbbbbbbbbbbbbb',
          fingerprint: 'bbbbbbbbbbbbbbbb',
        },
      ],
    });
  });
});

describe('Slack message', () => {
  it('is one line per alert under a FIRING/RESOLVED header', () => {
    const { text } = buildSlackMessage(notification);
    expect(text.split('\n')).toEqual([
      '*[FIRING:1, RESOLVED:1] {alertname="ttft-slo"}*',
      ':red_circle: *ttft-slo* (page): a slow _since 2026-01-01T00:01:00.000Z_',
      ':large_green_circle: *ttft-slo* (page): b slow _2026-01-01T00:00:00.000Z – 2026-01-01T00:04:00.000Z_',
      '<http://governor:4318|Open Governor>',
    ]);
  });
});

describe('Alertmanager API alerts', () => {
  it('keeps firing alerts alive for four resend intervals and resolves the rest now', () => {
    const now = Date.parse('2026-03-01T00:00:00.000Z');
    const [firing, resolved] = buildAlertmanagerApiAlerts(notification, now, 60_000);
    expect(firing!.endsAt).toBe('2026-03-01T00:04:00.000Z');
    expect(resolved!.endsAt).toBe('2026-01-01T00:04:00.000Z');
    // A replay running ahead of the wall clock still sends a valid alert (endsAt ≥ startsAt).
    const [early] = buildAlertmanagerApiAlerts(notification, Date.parse('2025-01-01T00:00:00Z'), 60_000);
    expect(Date.parse(early!.endsAt)).toBeGreaterThan(Date.parse(early!.startsAt));
  });
});
