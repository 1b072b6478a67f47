import { rmSync } from 'node:fs';
import { GovernorConfig } from '@governor/conventions';
import { createHopClassifier, normalizeTraceRequest } from '@governor/otlp';
import { syntheticTraceRequest, traceRequestToJson } from '@governor/otlp/fixtures';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningGovernor, startGovernor } from '../start-governor.ts';
import { type TestGovernor, startTestGovernor } from './start-test-governor.ts';

// One span dated 2100 must not blind Governor: intake refuses it (partial success, counted),
// the watermark stays near the real clock, the control loop runs no tick past now + 5m, past
// times still go in, and a store poisoned before the guard existed recovers when it starts.

const MS = 1_000_000n;
const YEAR_2100_NS = BigInt(Date.parse('2100-01-01T00:00:00Z')) * MS;
const nowNs = () => BigInt(Date.now()) * MS;
const FIVE_MINUTES_MS = 5 * 60_000;

let t: TestGovernor;
beforeAll(async () => {
  t = await startTestGovernor();
});
afterAll(async () => {
  await t?.close();
});

async function postTraces(url: string, body: string) {
  const response = await fetch(`${url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  return {
    status: response.status,
    body: (await response.json()) as { partialSuccess?: { rejectedSpans?: string; errorMessage?: string } },
  };
}

async function signalsAtMs(url: string): Promise<{ atMs: number; requests: number }> {
  const response = await fetch(`${url}/api/signals?window=5m&by=pool`);
  const body = (await response.json()) as { at: string; groups: { requests: number }[] };
  return { atMs: Date.parse(body.at), requests: body.groups.reduce((n, g) => n + g.requests, 0) };
}

describe('event-time guard at intake', () => {
  it('refuses spans dated past now + 5m with a reason, keeps the rest and counts the refusal', async () => {
    // Two live batches: the later one moves the watermark past the requests of the earlier one.
    const live = syntheticTraceRequest({ spans: 40, seed: 1, startNs: nowNs() - 180_000n * MS });
    const later = syntheticTraceRequest({ spans: 4, seed: 11, startNs: nowNs() - 30_000n * MS });
    const future = syntheticTraceRequest({ spans: 8, seed: 2, startNs: YEAR_2100_NS });
    const reply = await postTraces(
      t.url,
      traceRequestToJson({
        resourceSpans: [...live.resourceSpans, ...later.resourceSpans, ...future.resourceSpans],
      }),
    );
    expect(reply.status).toBe(200);
    expect(reply.body.partialSuccess?.rejectedSpans).toBe('8');
    expect(reply.body.partialSuccess?.errorMessage).toMatch(/max_future_skew.*2100-01-01/);
    expect(await t.count('SELECT count(*) FROM spans')).toBe(44);
    expect(await t.count(`SELECT count(*) FROM spans WHERE start_ns >= ${YEAR_2100_NS}`)).toBe(0);

    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    expect(metrics).toMatch(/^governor_ingest_rejected_total\{reason="future"\} 8$/m);

    const signals = await signalsAtMs(t.url);
    expect(Math.abs(signals.atMs - Date.now())).toBeLessThan(FIVE_MINUTES_MS);
    expect(signals.requests).toBeGreaterThan(0);
  });

  it('still accepts backfills of past time in full', async () => {
    const backfill = syntheticTraceRequest({
      spans: 16,
      seed: 3,
      startNs: BigInt(Date.parse('2024-01-01T00:00:00Z')) * MS,
    });
    const reply = await postTraces(t.url, traceRequestToJson(backfill));
    expect(reply.status).toBe(200);
    expect(reply.body.partialSuccess ?? { rejectedSpans: '0' }).toMatchObject({ rejectedSpans: '0' });
    expect(await t.count(`SELECT count(*) FROM spans WHERE start_ns < ${nowNs() - 86_400_000n * MS}`)).toBe(
      16,
    );
  });

  it('refuses a control tick past now + 5m', async () => {
    const response = await fetch(`${t.url}/api/control/evaluate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ at: '2099-06-01T00:00:00Z' }),
    });
    expect(response.status).toBe(409);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      'GOV_ERR_CONTROL_TIME_AHEAD',
    );
    const ok = await fetch(`${t.url}/api/control/evaluate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({}),
    });
    expect(ok.status).toBe(200);
  });
});

describe('a store poisoned before the guard existed', () => {
  it('starts with a watermark near now and a control loop that ticks', async () => {
    const dataDir = t.dataDir.replace(/$/, '-poisoned');
    const config = GovernorConfig.parse({
      server: { host: '127.0.0.1', http_port: 0, grpc_port: 0, data_dir: dataDir },
    });
    let g: RunningGovernor | null = await startGovernor({ config, env: {} });
    try {
      const classifier = createHopClassifier();
      const rows = (startNs: bigint, seed: number) =>
        normalizeTraceRequest(syntheticTraceRequest({ spans: 40, seed, startNs }), {
          classifier,
          aliases: {},
        }).rows;
      // What the unguarded intake and ticker left: spans in 2100, a tick and an alert cursor in 2099.
      await g.store.writer.write(
        [...rows(nowNs() - 180_000n * MS, 4), ...rows(nowNs() - 30_000n * MS, 6), ...rows(YEAR_2100_NS, 5)],
        [],
      );
      const tickNs = YEAR_2100_NS - 86_400_000n * MS;
      await g.engine.embedded!.execute(
        `INSERT INTO control_recommendations (id, kind, target, target_key, action, direction, reason,
           evidence, expected_impact, confidence, state, scope_pools, created_ns, updated_ns)
         VALUES ('poisoned', 'scale', '{"pool":"p"}', 'pool=p', '{"from":1,"to":2}', 'increase', 'r',
           '{}', '{}', 0.5, 'rejected', '[]', ${tickNs}, ${tickNs})`,
      );
      await g.engine.embedded!.execute(
        `UPDATE alert_engine_state SET value = '${tickNs}' WHERE name = 'evaluated_until_ns'`,
      );
      await g.close();
      g = null;

      g = await startGovernor({ config, env: {} });
      const signals = await signalsAtMs(g.httpUrl);
      expect(Math.abs(signals.atMs - Date.now())).toBeLessThan(FIVE_MINUTES_MS);
      expect(signals.requests).toBeGreaterThan(0);
      const evaluate = await fetch(`${g.httpUrl}/api/control/evaluate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({}),
      });
      expect(evaluate.status, await evaluate.clone().text()).toBe(200);
      const [state] = await g.engine.embedded!.query<{ updated: string; cursor: string }>(
        `SELECT (SELECT updated_ns FROM control_recommendations WHERE id = 'poisoned')::VARCHAR AS updated,
                (SELECT value FROM alert_engine_state WHERE name = 'evaluated_until_ns') AS cursor`,
      );
      expect(BigInt(state!.updated)).toBeLessThanOrEqual(nowNs() + BigInt(FIVE_MINUTES_MS) * MS);
      expect(BigInt(state!.cursor)).toBeLessThanOrEqual(nowNs() + BigInt(FIVE_MINUTES_MS) * MS);
    } finally {
      await g?.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('governor control reset --to now', () => {
  it('moves a recommendation dated 2099 back to now on a stopped data dir', async () => {
    const dataDir = t.dataDir.replace(/$/, '-reset');
    try {
      const { createStore } = await import('@governor/store');
      let store = await createStore({ dataDir });
      const tickNs = YEAR_2100_NS - 86_400_000n * MS;
      await store.execute(
        `INSERT INTO control_recommendations (id, kind, target, target_key, action, direction, reason,
           evidence, expected_impact, confidence, state, scope_pools, created_ns, updated_ns)
         VALUES ('poisoned', 'scale', '{"pool":"p"}', 'pool=p', '{"from":1,"to":2}', 'increase', 'r',
           '{}', '{}', 0.5, 'proposed', '[]', ${tickNs}, ${tickNs})`,
      );
      await store.close();
      const { runControlCommand } = await import('../cli/control-command.ts');
      const before = nowNs();
      const args = { positional: ['reset'], flags: { to: 'now', 'data-dir': dataDir } };
      expect(await runControlCommand(args)).toBe(0);
      store = await createStore({ dataDir });
      const [row] = await store.query<{ updated: string }>(
        "SELECT updated_ns::VARCHAR AS updated FROM control_recommendations WHERE id = 'poisoned'",
      );
      await store.close();
      expect(BigInt(row!.updated)).toBeGreaterThanOrEqual(before);
      expect(BigInt(row!.updated)).toBeLessThanOrEqual(nowNs());
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
