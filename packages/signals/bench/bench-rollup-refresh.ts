import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type SpanRow, createHopClassifier, normalizeTraceRequest } from '@governor/otlp';
import { syntheticTraceRequest } from '@governor/otlp/fixtures';
import { type Store, createStore } from '@governor/store';
import { startBackgroundRefresh } from '../src/rollup/background-refresh.ts';
import { REFRESH_STEPS, getFactsRefresher } from '../src/rollup/refresh-request-facts.ts';

// The request rollup's refresh alone: a store holding `--history` spans, then rounds of N fresh
// spans (new traces, event time moving on) each followed by one refresh, timed by process CPU (all
// of DuckDB's threads included) and wall clock. With `--rate`, a sustained run instead: spans
// written at that rate while startBackgroundRefresh schedules the refreshes, printing how long an
// acknowledged span waited for the rollup. The last line fingerprints request_facts, so two
// versions of the rollup can be checked for the same rows on the same input.
//
// `--task-idle-ms` is signals.task_idle_ms: how far back (event time) the refresh looks for earlier
// requests; the history is written at 20,000 spans per second of event time, so a value in ms under
// history ÷ 20 (2M spans cover 100,000 ms) leaves the older part of it out of the lookups.
//
//   node --import tsx packages/signals/bench/bench-rollup-refresh.ts [--sizes 2000,10000,40000]
//     [--history 200000] [--rounds 5] [--task-idle-ms 1800000]
//     [--rate 8000 --seconds 30 --interval-ms 2000]

const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '2000,10000,40000' },
    history: { type: 'string', default: '200000' },
    rounds: { type: 'string', default: '5' },
    rate: { type: 'string' },
    seconds: { type: 'string', default: '30' },
    'interval-ms': { type: 'string', default: '2000' },
    'task-idle-ms': { type: 'string', default: '1800000' },
  },
  strict: true,
});

const START_NS = 1_760_000_000_000_000_000n;
/** Event time per span written: 20,000 spans/s. */
const NS_PER_SPAN = 50_000n;
const BATCH_SPANS = 500;
const classifier = createHopClassifier();

let batchNo = 0;
let spansMade = 0;
/** The next `spans` fresh spans (whole traces of 4), in batches as clients send them. */
function makeBatch(spans: number): SpanRow[] {
  const seed = ++batchNo;
  const rows = normalizeTraceRequest(
    syntheticTraceRequest({
      spans,
      seed,
      startNs: START_NS + BigInt(spansMade) * NS_PER_SPAN,
      idPrefix: seed.toString(16).padStart(8, '0'),
    }),
    { classifier, aliases: {} },
  ).rows;
  spansMade += rows.length;
  return rows;
}

async function writeSpans(store: Store, spans: number): Promise<void> {
  const writes: Promise<void>[] = [];
  for (let left = spans; left > 0; left -= BATCH_SPANS)
    writes.push(store.writer.write(makeBatch(Math.min(BATCH_SPANS, left)), []));
  await Promise.all(writes);
}

function cpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)] ?? Number.NaN;
}

const fmt = (n: number, digits = 0) => n.toFixed(digits).padStart(8);

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'governor-bench-rollup-'));
  const store = await createStore({ dataDir: dir });
  const refresher = getFactsRefresher(store, { taskIdleNs: BigInt(args['task-idle-ms']) * 1_000_000n });
  try {
    const history = Number(args.history);
    const load0 = loadavg()[0]!;
    for (let written = 0; written < history; written += 50_000) {
      await writeSpans(store, Math.min(50_000, history - written));
      await refresher.refresh();
    }
    await store.writer.checkpoint();
    console.log(`history: ${history} spans rolled up; load average ${load0.toFixed(1)}`);
    if (args.rate !== undefined) await runSustained(store, refresher);
    else await runRounds(store, refresher);
    await refresher.refresh();
    // Doubles rounded to 9 significant digits: a sum's last bit depends on the order it adds in.
    const columns = await store.query<{ column_name: string; column_type: string }>(
      'SELECT column_name, column_type FROM (DESCRIBE request_facts)',
    );
    const list = columns
      .filter((c) => c.column_name !== 'trace_key' && c.column_name !== 'task_key')
      .map((c) =>
        c.column_type === 'DOUBLE'
          ? `CASE WHEN "${c.column_name}" = 0 THEN 0 ELSE round("${c.column_name}", (8 - floor(log10(abs("${c.column_name}"))))::INTEGER) END AS "${c.column_name}"`
          : `"${c.column_name}"`,
      )
      .join(', ');
    const [fp] = await store.query<Record<string, unknown>>(
      `SELECT count(*)::VARCHAR AS requests, bit_xor(hash(f))::VARCHAR AS fingerprint FROM (SELECT ${list} FROM request_facts) f`,
    );
    console.log(`request_facts: ${fp?.requests} rows, fingerprint ${fp?.fingerprint}`);
    console.log(`load average at the end: ${loadavg()[0]!.toFixed(1)}`);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function runRounds(store: Store, refresher: ReturnType<typeof getFactsRefresher>): Promise<void> {
  const sizes = args.sizes.split(',').map(Number);
  const rounds = Number(args.rounds);
  console.log(
    `task idle ${args['task-idle-ms']} ms\nspans/refresh   CPU µs/span (median)   wall ms/refresh (median)   load`,
  );
  for (const size of sizes) {
    const perSpan: number[] = [];
    const wall: number[] = [];
    const stepMs: Record<string, number[]> = {};
    for (let r = 0; r < rounds; r++) {
      await writeSpans(store, size);
      await store.writer.whenMoved();
      const cpu0 = cpuUs();
      const t0 = performance.now();
      const steps0 = refresher.stepSeconds();
      const result = await refresher.refresh();
      wall.push(performance.now() - t0);
      const steps1 = refresher.stepSeconds();
      for (const step of REFRESH_STEPS) {
        const list = stepMs[step] ?? [];
        list.push((steps1[step] - steps0[step]) * 1000);
        stepMs[step] = list;
      }
      perSpan.push((cpuUs() - cpu0) / size);
      if (result.tracesTouched !== size / 4)
        throw new Error(`refresh touched ${result.tracesTouched} traces`);
    }
    const steps = Object.entries(stepMs)
      .map(([k, v]) => [k, median(v)] as const)
      .filter(([, v]) => v >= 1)
      .sort((a, b) => b[1] - a[1]);
    console.log(
      `${String(size).padStart(13)}   ${fmt(median(perSpan), 1)} (${perSpan.map((v) => v.toFixed(0)).join(' ')})   ${fmt(median(wall))} (${wall.map((v) => v.toFixed(0)).join(' ')})   ${loadavg()[0]!.toFixed(1)}`,
    );
    console.log(
      `${' '.repeat(15)}steps, median ms/refresh: ${steps.map(([k, v]) => `${k} ${v.toFixed(0)}`).join(', ')}`,
    );
  }
}

/**
 * Spans written at `--rate` for `--seconds` while startBackgroundRefresh keeps the rollup up (every
 * `--interval-ms`). A batch's lag is from its acknowledgement to the
 * end of the first refresh that started after it.
 */
async function runSustained(store: Store, refresher: ReturnType<typeof getFactsRefresher>): Promise<void> {
  const rate = Number(args.rate);
  const intervalMs = Number(args['interval-ms']);
  const acked: number[] = [];
  const lags: number[] = [];
  const refreshSpans: number[] = [];
  let refreshCpuUs = 0;
  let ackedSpans = 0;
  const background = startBackgroundRefresh(
    {
      async refresh() {
        const covered = acked.splice(0);
        const spans = ackedSpans;
        ackedSpans = 0;
        const cpu0 = cpuUs();
        const result = await refresher.refresh();
        refreshCpuUs += cpuUs() - cpu0;
        const done = performance.now();
        for (const at of covered) lags.push(done - at);
        refreshSpans.push(spans);
        return result;
      },
    },
    { intervalMs },
  );
  // Batches made up front, so the run's CPU is the store's and the rollup's.
  const batches = Array.from({ length: Math.ceil((rate * Number(args.seconds)) / BATCH_SPANS) }, () =>
    makeBatch(BATCH_SPANS),
  );
  const started = performance.now();
  const endAt = started + Number(args.seconds) * 1000;
  const cpuStart = cpuUs();
  const pending: Promise<void>[] = [];
  let written = 0;
  while (performance.now() < endAt) {
    const due = ((performance.now() - started) / 1000) * rate;
    const rows = batches[written / BATCH_SPANS];
    if (rows && written + BATCH_SPANS <= due) {
      written += rows.length;
      pending.push(
        store.writer.write(rows, []).then(() => {
          acked.push(performance.now());
          ackedSpans += rows.length;
        }),
      );
    } else await new Promise((r) => setTimeout(r, 5));
  }
  await Promise.all(pending);
  await background.stop();
  const totalCpuUs = cpuUs() - cpuStart;
  const sorted = [...lags].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  const rolled = refreshSpans.reduce((a, b) => a + b, 0);
  console.log(
    `sustained ${rate} spans/s for ${args.seconds} s, interval ${intervalMs} ms: ` +
      `${refreshSpans.length} refreshes, median ${median(refreshSpans)} spans each; ` +
      `refresh CPU ${(refreshCpuUs / Math.max(1, rolled)).toFixed(1)} µs/span (writes running beside it ` +
      `included), whole process ${(totalCpuUs / written).toFixed(1)} µs/span; ` +
      `rollup lag after ack p50 ${at(0.5).toFixed(0)} ms, p99 ${at(0.99).toFixed(0)} ms, max ${sorted.at(-1)?.toFixed(0)} ms ` +
      `(${lags.length} of ${written / BATCH_SPANS} batches); load ${loadavg()[0]!.toFixed(1)}`,
  );
}

await main();
