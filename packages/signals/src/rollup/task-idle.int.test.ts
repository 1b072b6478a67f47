import { type SpanRow, createHopClassifier, normalizeTraceRequest } from '@governor/otlp';
import { syntheticTraceRequest } from '@governor/otlp/fixtures';
import type { Store } from '@governor/store';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempStore, testConfig } from '../../test/store-harness.ts';
import { createSignals } from '../create-signals.ts';
import { getFactsRefresher } from './refresh-request-facts.ts';

// signals.task_idle_ms: a task that went idle for longer ends there, as a session timeout splits
// web sessions, and the rollup looks back no further than that (and the start of the tasks it
// finds) for earlier requests. The split must not depend on how spans were delivered: refreshed
// one request at a time, the facts are those of one refresh over everything.

const IDLE_MS = 60_000;
const S = 1_000_000_000n;
const BASE_NS = 1_767_225_600_000_000_000n;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function freshStore(): Promise<Store> {
  const { store, close } = await createTempStore();
  cleanups.push(close);
  getFactsRefresher(store, { taskIdleNs: BigInt(IDLE_MS) * 1_000_000n });
  return store;
}

/** `count` synthetic requests (4 spans each, under a second), in order of their trace ids' first span. */
function requests(count: number, seed: number): SpanRow[][] {
  const rows = normalizeTraceRequest(syntheticTraceRequest({ spans: count * 4, seed, startNs: BASE_NS }), {
    classifier: createHopClassifier(),
    aliases: {},
  }).rows;
  const byTrace = new Map<string, SpanRow[]>();
  for (const row of rows) byTrace.set(row.traceId, [...(byTrace.get(row.traceId) ?? []), row]);
  return [...byTrace.values()].slice(0, count);
}

/** The request's spans moved to start at BASE + atS seconds, its root naming workflow `workflow`. */
function placed(spans: SpanRow[], atS: number, workflow: string): SpanRow[] {
  let start = spans[0]!.startNs;
  for (const r of spans) if (r.startNs < start) start = r.startNs;
  const shift = BASE_NS + BigInt(atS) * S - start;
  return spans.map((r) => ({
    ...r,
    startNs: r.startNs + shift,
    endNs: r.endNs + shift,
    firstTokenNs: r.firstTokenNs === null ? null : r.firstTokenNs + shift,
    ...(r.parentSpanId ? {} : { workflowId: workflow, taskId: workflow }),
  }));
}

interface TaskRow {
  trace_id: string;
  task_id: string;
  task_start_ns: bigint | string;
  task_requests: number;
  is_task_last: boolean;
}

const taskRows = (store: Store) =>
  store.query<TaskRow>(
    'SELECT trace_id, task_id, task_start_ns, task_requests, is_task_last FROM request_facts ORDER BY start_ns',
  );

/** Every column of request_facts, comparable across stores (doubles rounded). */
async function facts(store: Store): Promise<string[]> {
  const rows = await store.query<Record<string, unknown>>(
    'SELECT * FROM request_facts ORDER BY trace_id, start_ns',
  );
  return rows.map((row) =>
    JSON.stringify(row, (_k, v) =>
      typeof v === 'bigint'
        ? String(v)
        : typeof v === 'number' && !Number.isInteger(v)
          ? Number(v.toPrecision(9))
          : v,
    ),
  );
}

/** The same requests written and refreshed one by one, and all at once: both stores' facts. */
async function incrementalAndAtOnce(deliveries: SpanRow[][]): Promise<{ incremental: Store; atOnce: Store }> {
  const incremental = await freshStore();
  for (const spans of deliveries) {
    await incremental.writer.write(spans, []);
    await getFactsRefresher(incremental).refresh();
  }
  const atOnce = await freshStore();
  await atOnce.writer.write(deliveries.flat(), []);
  await getFactsRefresher(atOnce).refresh();
  expect(await facts(incremental)).toEqual(await facts(atOnce));
  return { incremental, atOnce };
}

describe('signals.task_idle_ms', () => {
  it('keeps a workflow one task while its requests follow each other within the idle time, however long it runs', async () => {
    // Six requests 40 s apart: 200 s in all, more than three times the idle time.
    const reqs = requests(6, 1).map((spans, i) => placed(spans, i * 40, 'wf-long'));
    const { incremental } = await incrementalAndAtOnce(reqs);
    const rows = await taskRows(incremental);
    expect(rows).toHaveLength(6);
    expect(new Set(rows.map((r) => r.task_start_ns)).size).toBe(1);
    expect(rows.every((r) => r.task_requests === 6)).toBe(true);
    expect(rows.filter((r) => r.is_task_last)).toHaveLength(1);
  }, 60_000);

  it('splits a workflow that went idle for longer into two tasks, and joins them again when a request in the gap arrives', async () => {
    const reqs = requests(9, 2);
    // Two bursts 280 s apart.
    const bursts = [0, 20, 300, 320].map((at, i) => placed(reqs[i]!, at, 'wf-idle'));
    const { incremental } = await incrementalAndAtOnce(bursts);
    let rows = await taskRows(incremental);
    expect(rows.map((r) => r.task_requests)).toEqual([2, 2, 2, 2]);
    expect(rows.filter((r) => r.is_task_last)).toHaveLength(2);
    expect(BigInt(rows[0]!.task_start_ns)).toBeLessThan(BigInt(rows[2]!.task_start_ns));
    const tasksView = () =>
      incremental.query<{ requests: number }>(
        "SELECT requests FROM tasks WHERE task_id = 'wf-idle' ORDER BY start_ns",
      );
    expect((await tasksView()).map((t) => Number(t.requests))).toEqual([2, 2]);
    // GET /api/tasks lists them apart too.
    const signals = createSignals(
      incremental,
      testConfig({ signals: { lateness_ms: 0, task_idle_ms: IDLE_MS } }),
    );
    const listed = await signals.tasks({ fromNs: BASE_NS - S, toNs: BASE_NS + 1_000n * S, limit: 10 });
    expect(listed.map((t) => [t.taskId, t.attempts.length])).toEqual([
      ['wf-idle', 2],
      ['wf-idle', 2],
    ]);

    // Late requests fill the gap at under the idle time apart: one task of nine.
    const late = [70, 120, 170, 220, 270].map((at, i) => placed(reqs[4 + i]!, at, 'wf-idle'));
    for (const spans of late) {
      await incremental.writer.write(spans, []);
      await getFactsRefresher(incremental).refresh();
    }
    rows = await taskRows(incremental);
    expect(rows).toHaveLength(9);
    expect(rows.every((r) => r.task_requests === 9)).toBe(true);
    expect(rows.filter((r) => r.is_task_last)).toHaveLength(1);
    expect((await tasksView()).map((t) => Number(t.requests))).toEqual([9]);
    const atOnce = await freshStore();
    await atOnce.writer.write([...bursts, ...late].flat(), []);
    await getFactsRefresher(atOnce).refresh();
    expect(await facts(incremental)).toEqual(await facts(atOnce));
  }, 60_000);

  it('splits and keeps tasks the same way when every refresh is a large batch (the join path)', async () => {
    // 420 workflows of six requests, 40 s apart; every other one pauses 280 s after its third.
    const reqs = requests(2_520, 4);
    const at = (w: number, i: number) => i * 40 + (w % 2 === 1 && i >= 3 ? 240 : 0);
    const byTime = new Map<number, SpanRow[]>();
    reqs.forEach((spans, n) => {
      const w = Math.floor(n / 6);
      const t = at(w, n % 6);
      byTime.set(t, [...(byTime.get(t) ?? []), ...placed(spans, t, `wf-${w}`)]);
    });
    const deliveries = [...byTime.entries()].sort(([a], [b]) => a - b).map(([, spans]) => spans);
    expect(deliveries.every((spans) => spans.length / 4 > 200)).toBe(true);
    const { incremental } = await incrementalAndAtOnce(deliveries);
    const rows = await taskRows(incremental);
    const lastRows = rows.filter((r) => r.is_task_last);
    // 210 workflows stay one task of six, 210 become two of three.
    expect(lastRows).toHaveLength(210 + 420);
    expect(lastRows.filter((r) => r.task_requests === 6)).toHaveLength(210);
    expect(lastRows.filter((r) => r.task_requests === 3)).toHaveLength(420);
  }, 120_000);

  it('rolls a trace whose spans arrive further apart than the idle time up as one request once a span covering the gap arrives', async () => {
    const [spans] = requests(1, 3);
    const trace = placed(spans!, 0, 'wf-trace');
    const root = trace.find((r) => !r.parentSpanId)!;
    const children = trace.filter((r) => r.parentSpanId);
    // The children's spans 5 minutes apart, the root (delivered last) covering them all.
    const apart = children.map((r, i) => ({
      ...r,
      startNs: r.startNs + BigInt(i) * 300n * S,
      endNs: r.endNs + BigInt(i) * 300n * S,
    }));
    let lastEnd = root.endNs;
    for (const r of apart) if (r.endNs > lastEnd) lastEnd = r.endNs;
    const coveringRoot = { ...root, endNs: lastEnd };

    const store = await freshStore();
    for (const child of apart) {
      await store.writer.write([child], []);
      await getFactsRefresher(store).refresh();
    }
    // Nothing ties them together yet: three requests with one trace id.
    expect((await taskRows(store)).length).toBe(apart.length);
    await store.writer.write([coveringRoot], []);
    await getFactsRefresher(store).refresh();
    const rows = await taskRows(store);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.trace_id).toBe(root.traceId);

    const atOnce = await freshStore();
    await atOnce.writer.write([...apart, coveringRoot], []);
    await getFactsRefresher(atOnce).refresh();
    expect(await facts(store)).toEqual(await facts(atOnce));
  }, 60_000);
});
