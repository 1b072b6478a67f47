import { encodeMetricsRequestProtobuf, encodeTraceRequestProtobuf } from '@governor/otlp';
import {
  A100_POOL,
  FLEET_CONFIG,
  type FleetScenario,
  H100_POOL,
  atMs,
  buildFleetScenario,
  expectedA100CostUsd,
  expectedGroup,
  expectedH100CostUsd,
  mergeExports,
  traceIdOf,
} from '@governor/signals/fixtures';
import type { SignalGroupDetail, TaskSummary, TraceSummary, WaterfallSpan } from '@governor/signals';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGovernor, startTestGovernor } from '../otlp/start-test-governor.ts';

// The signals API end to end: a fleet with known answers goes in through OTLP/HTTP protobuf (the
// ingest path real exporters use), and GET /api/signals, /api/signals/series, /api/traces and
// /api/tasks answer with exactly the expected figures.

const AT_MS = 400_000;
const iso = (ms: number) => new Date(Number(atMs(ms) / 1_000_000n)).toISOString();

let t: TestGovernor;
let scenario: FleetScenario;

async function post(path: string, body: Uint8Array): Promise<void> {
  const response = await fetch(`${t.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-protobuf' },
    body: Buffer.from(body),
  });
  expect(response.status).toBe(200);
}

async function get(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${t.url}${path}`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  t = await startTestGovernor({ ...FLEET_CONFIG, control: { enabled: false } });
  scenario = buildFleetScenario();
  // Several exports, as a batching exporter would send them.
  for (let i = 0; i < scenario.traces.length; i += 100) {
    await post('/v1/traces', encodeTraceRequestProtobuf(mergeExports(scenario.traces.slice(i, i + 100))));
  }
  for (const m of scenario.metrics) await post('/v1/metrics', encodeMetricsRequestProtobuf(m));
});
afterAll(async () => {
  await t?.close();
});

describe('GET /api/signals', () => {
  it('answers the documented shape with the ground-truth figures, by pool', async () => {
    const { status, body } = await get(`/api/signals?window=5m&by=pool&at=${iso(AT_MS)}`);
    expect(status).toBe(200);
    expect(body.at).toBe(iso(AT_MS));
    expect(body.window).toBe('5m');
    const groups = body.groups as SignalGroupDetail[];
    expect(groups.map((g) => g.key)).toEqual([{ pool: H100_POOL }, { pool: A100_POOL }]);
    const h100 = groups[0]!;
    const e = expectedGroup(scenario, AT_MS - 300_000, AT_MS, (r) => r.spec.pool === H100_POOL);
    expect(h100.requests).toBe(e.requests);
    expect(h100.ttftMs.p50).toBeCloseTo(e.ttft[0]!, 6);
    expect(h100.ttftMs.p95).toBeCloseTo(e.ttft[1]!, 6);
    expect(h100.ttftMs.p99).toBeCloseTo(e.ttft[2]!, 6);
    expect(h100.e2eMs.p95).toBeCloseTo(e.e2e[1]!, 6);
    expect(h100.tasks).toBe(e.tasks);
    expect(h100.successfulTasks).toBe(e.successfulTasks);
    expect(h100.costUsd?.toFixed(2)).toBe(expectedH100CostUsd(scenario, AT_MS - 300_000, AT_MS).toFixed(2));
    expect(groups[1]!.costUsd?.toFixed(2)).toBe(
      expectedA100CostUsd(scenario, AT_MS - 300_000, AT_MS).toFixed(2),
    );
    for (const field of [
      'requests',
      'ttftMs',
      'serverTtftMs',
      'e2eMs',
      'errorRate',
      'goodput',
      'utilizationRatio',
      'memoryUtil',
      'computeUtil',
      'successPerDollar',
      'costPerSuccessfulTaskUsd',
      'costUsd',
      'tasks',
      'successfulTasks',
      'retryRatio',
      'queueMs',
      'cacheHitRate',
      'replicas',
      'hops',
    ]) {
      expect(h100).toHaveProperty(field);
    }
    expect(h100.serverTtftMs).toEqual({ p50: null, p95: null, p99: null });
    expect(Object.keys(h100.hops).sort()).toEqual([
      'decode',
      'gateway',
      'prefill',
      'queue',
      'router',
      'runtime',
    ]);
  });

  it('filters by a dimension given as a parameter, and defaults `at` to the watermark', async () => {
    const { body } = await get('/api/signals?window=1h&by=tenant&pool=' + A100_POOL);
    const newest = Math.max(...scenario.requests.map((r) => r.truth.endMs));
    expect(body.at).toBe(iso(newest - 10_000));
    const groups = body.groups as SignalGroupDetail[];
    expect(groups.map((g) => g.key)).toEqual([{ tenant: 'acme' }, { tenant: 'globex' }]);
    const acme = expectedGroup(
      scenario,
      newest - 10_000 - 3_600_000,
      newest - 10_000,
      (r) => r.spec.pool === A100_POOL && r.spec.tenant === 'acme',
    );
    expect(groups[0]!.requests).toBe(acme.requests);
  });

  it.each([
    ['window=abc', 'GOV_ERR_SIGNALS_BAD_WINDOW', /invalid duration "abc"/],
    ['window=0s', 'GOV_ERR_SIGNALS_BAD_WINDOW', /longer than 0/],
    ['window=30d', 'GOV_ERR_SIGNALS_BAD_WINDOW', /at most 7d/],
    ['by=pool,flavour', 'GOV_ERR_SIGNALS_BAD_DIMENSION', /"flavour" is not a group dimension/],
    ['by=pool,pool', 'GOV_ERR_SIGNALS_BAD_DIMENSION', /twice/],
    ['at=yesterday', 'GOV_ERR_SIGNALS_BAD_TIME', /not an RFC 3339 time/],
    ['at=2026-02-30T00:00:00Z', 'GOV_ERR_SIGNALS_BAD_TIME', /not an RFC 3339 time/],
    ['windw=5m', 'GOV_ERR_REQUEST_INVALID', /unknown query parameter "windw"/],
  ])('answers 400 with a clear message for %s', async (query, code, message) => {
    const { status, body } = await get(`/api/signals?${query}`);
    expect(status).toBe(400);
    const error = body.error as { code: string; message: string };
    expect(error.code).toBe(code);
    expect(error.message).toMatch(message);
  });

  it('keeps nanosecond precision in `at`', async () => {
    const { body } = await get('/api/signals?window=5m&at=2026-01-01T00:06:40.000000001Z');
    expect((body.groups as SignalGroupDetail[])[0]!.requests).toBeGreaterThan(0);
  });
});

describe('GET /api/signals/series', () => {
  it('returns one point per step for each group, equal to the snapshot of that step', async () => {
    const { status, body } = await get(
      `/api/signals/series?signal=ttftMs.p95&by=pool&from=${iso(100_000)}&to=${iso(400_000)}&step=100s`,
    );
    expect(status).toBe(200);
    expect(body.signal).toBe('ttftMs.p95');
    expect(body.step).toBe('1m40s');
    const series = body.series as {
      key: Record<string, string>;
      points: { t: string; v: number | null }[];
    }[];
    const h100 = series.find((s) => s.key.pool === H100_POOL)!;
    expect(h100.points.map((p) => p.t)).toEqual([iso(200_000), iso(300_000), iso(400_000)]);
    const e = expectedGroup(scenario, 300_000, 400_000, (r) => r.spec.pool === H100_POOL);
    expect(h100.points[2]!.v).toBeCloseTo(e.ttft[1]!, 6);
  });

  it('answers 400 for an unknown signal and for too many points', async () => {
    const unknown = await get('/api/signals/series?signal=ttft.p95');
    expect(unknown.status).toBe(400);
    expect((unknown.body.error as { code: string }).code).toBe('GOV_ERR_SIGNALS_UNKNOWN_SIGNAL');
    const many = await get(`/api/signals/series?signal=requests&from=${iso(0)}&to=${iso(3_600_000)}&step=1s`);
    expect(many.status).toBe(400);
    expect((many.body.error as { code: string }).code).toBe('GOV_ERR_SIGNALS_TOO_MANY_POINTS');
  });
});

describe('GET /api/traces', () => {
  it('searches by pool, outcome and latency, newest first', async () => {
    const { body } = await get(`/api/traces?pool=${H100_POOL}&outcome=error&limit=3`);
    const traces = body.traces as TraceSummary[];
    const expected = scenario.requests
      .filter((r) => r.spec.pool === H100_POOL && r.spec.outcome === 'error')
      .sort((a, b) => b.truth.endMs - a.truth.endMs)
      .slice(0, 3);
    expect(traces.map((tr) => tr.traceId)).toEqual(expected.map((r) => r.truth.traceId));
    expect(traces[0]!.e2eMs).toBeCloseTo(expected[0]!.truth.e2eMs, 6);
    expect(body.truncated).toBe(true);
    const slow = await get(`/api/traces?minMs=1800&from=${iso(0)}&to=${iso(AT_MS)}&limit=1000`);
    const slowExpected = scenario.requests.filter((r) => r.truth.e2eMs >= 1800 && r.truth.endMs <= AT_MS);
    expect((slow.body.traces as unknown[]).length).toBe(slowExpected.length);
  });

  it('returns the hop waterfall of one trace: spans in tree order with depth and offsets', async () => {
    const request = scenario.requests.find((r) => r.spec.trace === 'single-3')!;
    const { status, body } = await get(`/api/traces/${request.truth.traceId}`);
    expect(status).toBe(200);
    const spans = body.spans as WaterfallSpan[];
    expect(spans.map((s) => [s.name, s.depth, s.hop])).toEqual([
      ['POST /v1/chat/completions', 0, 'gateway'],
      ['route', 1, 'router'],
      ['llm_request', 1, 'runtime'],
      ['scheduler.queue', 2, 'scheduler'],
      ['prefill', 2, 'prefill'],
      ['decode', 2, 'decode'],
    ]);
    expect(spans[0]!.offsetMs).toBe(0);
    expect(spans[0]!.durationMs).toBeCloseTo(request.truth.e2eMs, 6);
    expect(spans[5]!.offsetMs).toBeCloseTo(request.truth.ttftMs, 6);
    expect(spans[0]!.events[0]).toEqual({
      name: 'first_token',
      offsetMs: expect.closeTo(request.truth.ttftMs, 6),
      attributes: {},
    });
    expect(spans[0]!.attributes['governor.pool']).toBe(H100_POOL);
    expect((body.request as Record<string, unknown>).ttftMs).toBeCloseTo(request.truth.ttftMs, 6);
  });

  it('answers 404 for an unknown trace and 400 for a malformed id', async () => {
    const missing = await get(`/api/traces/${traceIdOf('never-sent')}`);
    expect(missing.status).toBe(404);
    expect((missing.body.error as { code: string }).code).toBe('GOV_ERR_TRACE_NOT_FOUND');
    expect((await get('/api/traces/xyz')).status).toBe(400);
  });
});

describe('GET /api/tasks', () => {
  it('lists tasks with their attempts, outcome and cost share, by tenant and workflow type', async () => {
    const { status, body } = await get(
      `/api/tasks?tenant=acme&workflow_type=code-agent&from=${iso(0)}&to=${iso(600_000)}&limit=50`,
    );
    expect(status).toBe(200);
    const tasks = body.tasks as TaskSummary[];
    expect(tasks).toHaveLength(12);
    const retried = tasks.find((task) => task.taskId === 'workflow-4')!;
    expect(retried.status).toBe('success');
    expect(retried.requests).toBe(4);
    expect(retried.retries).toBe(1);
    expect(retried.steps).toBe(3);
    expect(retried.attempts.map((a) => [a.step, a.attempt, a.outcome, a.final])).toEqual([
      [1, 1, 'success', true],
      [2, 1, 'error', false],
      [2, 2, 'success', true],
      [3, 1, 'success', true],
    ]);
    expect(retried.costUsd).toBeGreaterThan(0);
    expect(tasks.find((task) => task.taskId === 'workflow-7')!.status).toBe('failed');
    const failed = await get(
      `/api/tasks?status=failed&workflow_type=code-agent&from=${iso(0)}&to=${iso(600_000)}`,
    );
    expect((failed.body.tasks as Record<string, unknown>[]).map((task) => task.taskId)).toEqual([
      'workflow-7',
    ]);
  });
});

describe('ad-hoc SQL views', () => {
  it('exposes requests and tasks through POST /api/sql', async () => {
    expect(await t.count('SELECT count(*) FROM requests')).toBe(scenario.requests.length);
    expect(await t.count("SELECT count(*) FROM tasks WHERE workflow_type = 'code-agent'")).toBe(12);
    const [row] = await t.sql(
      "SELECT outcome, requests, retries, steps FROM tasks WHERE task_id = 'workflow-4'",
    );
    expect(row).toEqual(['success', 4, 1, 3]);
  });
});
