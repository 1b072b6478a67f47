import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type SpanRow, createHopClassifier, normalizeTraceRequest } from '@governor/otlp';
import { syntheticTraceRequest } from '@governor/otlp/fixtures';
import { createStore } from '@governor/store';

// What DuckDB's vacuum costs the checkpoints under retention (server.duckdb_vacuum). One store per
// setting, the same spans: rounds of `--spans` fresh spans, and from the third round on a delete of
// the oldest third of span_store by event time, as retention's deletes of whole time ranges do;
// each round ends with a checkpoint, timed by wall clock and process CPU (DuckDB's threads
// included). Prints each checkpoint, the means after the first round, the ratio of the settings in
// this run, and the file size and row groups left.
//
//   node --import tsx packages/signals/bench/bench-checkpoint-vacuum.ts [--spans 100000] [--rounds 8]

const { values: args } = parseArgs({
  options: {
    spans: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '8' },
  },
});
const SPANS = Number(args.spans);
const ROUNDS = Number(args.rounds);
const BATCH = 500;
const START_NS = 1_760_000_000_000_000_000n;
const classifier = createHopClassifier();

/** Every round's spans, made once so both settings store the same rows. */
const rounds: SpanRow[][][] = [];
let made = 0;
for (let r = 0; r < ROUNDS; r++) {
  const batches: SpanRow[][] = [];
  for (let n = 0; n < SPANS; n += BATCH) {
    const seed = r * 100_000 + n / BATCH + 1;
    const rows = normalizeTraceRequest(
      syntheticTraceRequest({
        spans: BATCH,
        seed,
        startNs: START_NS + BigInt(made) * 50_000n,
        idPrefix: seed.toString(16).padStart(8, '0'),
      }),
      { classifier, aliases: {} },
    ).rows;
    made += rows.length;
    batches.push(rows);
  }
  rounds.push(batches);
}

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

interface Outcome {
  wallMs: number;
  cpuMs: number;
}

async function run(vacuum: boolean): Promise<Outcome> {
  const dir = mkdtempSync(join(tmpdir(), 'governor-bench-vacuum-'));
  const store = await createStore({
    dataDir: dir,
    vacuum,
    checkpointIntervalMs: 3_600_000,
    checkpointRows: Number.MAX_SAFE_INTEGER,
  });
  const each: string[] = [];
  let wall = 0;
  let cpu = 0;
  try {
    for (const [r, batches] of rounds.entries()) {
      await Promise.all(batches.map((rows) => store.writer.write(rows, [])));
      if (r >= 2) {
        const [cut] = await store.query<{ c: bigint }>(
          'SELECT quantile_disc(start_ns, 0.34) AS c FROM span_store',
        );
        await store.rollup.execute(`DELETE FROM span_store WHERE start_ns < ${cut!.c}`);
      }
      const t = performance.now();
      const c = cpuMs();
      await store.writer.checkpoint();
      const ms = performance.now() - t;
      const cc = cpuMs() - c;
      each.push(`${ms.toFixed(0)}/${cc.toFixed(0)}`);
      if (r >= 1) {
        wall += ms;
        cpu += cc;
      }
    }
    const [groups] = await store.query<{ n: bigint }>(
      "SELECT count(DISTINCT row_group_id) AS n FROM pragma_storage_info('span_store')",
    );
    const n = ROUNDS - 1;
    console.log(
      `vacuum ${vacuum ? 'on ' : 'off'}: checkpoints (wall ms/CPU ms) ${each.join(' ')}; mean after the first ${(wall / n).toFixed(0)} ms wall, ${(cpu / n).toFixed(0)} ms CPU; ${groups?.n} row groups, file ${(statSync(join(dir, 'governor.duckdb')).size / 1e6).toFixed(0)} MB`,
    );
    return { wallMs: wall / n, cpuMs: cpu / n };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(`${ROUNDS} rounds of ${SPANS} spans; load average ${loadavg()[0]!.toFixed(1)}`);
const off = await run(false);
const on = await run(true);
console.log(
  `vacuum on / off: ${(on.wallMs / off.wallMs).toFixed(2)}× the wall time, ${(on.cpuMs / off.cpuMs).toFixed(2)}× the CPU per checkpoint; load average ${loadavg()[0]!.toFixed(1)}`,
);
