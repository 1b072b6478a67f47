import { encodeMetricsRequestProtobuf, encodeTraceRequestProtobuf } from '@governor/otlp';
import { fleetMetricsRequest, syntheticTraceRequest } from '@governor/otlp/fixtures';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGovernor, startTestGovernor } from './start-test-governor.ts';

// Span exports wait in the exporters, not in a backlog of the request rollup that signals, alerts
// and the control loop would wait for: past ingest.max_rollup_lag they are refused with 503 and
// Retry-After, nothing of them stored; metric points are still taken; once the rollup has caught
// up, spans are taken again.

let t: TestGovernor;
beforeAll(async () => {
  // 1 ms: any span written since the rollup's last run started puts it past the bound.
  t = await startTestGovernor({ ingest: { max_rollup_lag: '1ms' } });
});
afterAll(async () => {
  await t?.close();
});

let batch = 0;
function postSpans(): Promise<Response> {
  const body = encodeTraceRequestProtobuf(
    syntheticTraceRequest({
      spans: 40,
      seed: ++batch,
      startNs: BigInt(Date.now() - 60_000) * 1_000_000n,
      idPrefix: batch.toString(16).padStart(8, '0'),
    }),
  );
  return fetch(`${t.url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-protobuf' },
    body,
  });
}

async function metricValue(name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${t.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? Number.NaN : Number(line.split(' ')[1]);
}

describe('back-pressure from the request rollup', () => {
  it('refuses span exports with 503 and Retry-After while the rollup is behind, takes them again once it caught up', async () => {
    expect((await postSpans()).status).toBe(200);
    // Right after: the rollup has not run over those spans yet.
    const refused = await postSpans();
    const stored = await t.count('SELECT count(*) FROM spans');
    expect(stored).toBe(40);
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // The Status message names the code an operator looks up in docs/errors.md, then says why.
    expect(await refused.text()).toMatch(/GOV_ERR_INGEST_ROLLUP_BEHIND: the request rollup needs/);
    expect(await t.count('SELECT count(*) FROM spans')).toBe(stored);
    expect(await metricValue('governor_ingest_requests_rejected_total', '{reason="rollup_behind"}')).toBe(1);

    // Metric points do not wait for the request rollup.
    const metrics = await fetch(`${t.url}/v1/metrics`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body: encodeMetricsRequestProtobuf(fleetMetricsRequest(BigInt(Date.now() - 60_000) * 1_000_000n)),
    });
    expect(metrics.status).toBe(200);

    // The rollup catches up (a scrape of /metrics reads the signals, which refreshes it first);
    // then the retried export is taken.
    expect(await metricValue('governor_ingest_spans_accepted_total')).toBe(40);
    expect(await metricValue('governor_rollup_lag_seconds')).toBe(0);
    expect(await t.count('SELECT count(*) FROM requests')).toBe(10);
    expect((await postSpans()).status).toBe(200);
    expect(await t.count('SELECT count(*) FROM spans')).toBe(80);
  }, 30_000);
});
