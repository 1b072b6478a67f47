import { parseArgs } from 'node:util';
import { createHopClassifier } from '../src/classify-hop.ts';
import { createColumnEncoder } from '../src/column-batch.ts';
import { syntheticTraceRequest } from '../src/fixtures/index.ts';
import { normalizeTraceRequest } from '../src/normalize-spans.ts';
import { readColumnBatch } from '../src/read-column-batch.ts';
import { SPAN_COLUMNS, type SpanRow } from '../src/span-row.ts';

// readColumnBatch over realistic span batches (the simulator's fleet traffic, normalized: four spans
// a trace, about fifteen attributes each), beside createColumnEncoder on the same rows in the same
// run as the reference: rows per second and µs per row, best of the rounds and their median.
//
//   node --import tsx packages/otlp/bench/bench-read-column-batch.ts [--spans 40000] [--rounds 15]

const { values: args } = parseArgs({
  options: {
    spans: { type: 'string', default: '40000' },
    rounds: { type: 'string', default: '15' },
  },
});
const spans = Number(args.spans);
const rounds = Number(args.rounds);

const rows = normalizeTraceRequest(
  syntheticTraceRequest({ spans, seed: 7, startNs: 1_767_225_600_000_000_000n }),
  { classifier: createHopClassifier(), aliases: {} },
).rows;
const encode = createColumnEncoder<SpanRow>(SPAN_COLUMNS);
const batches = encode(rows);
const bytes = batches.reduce(
  (sum, b) => sum + b.strings.byteLength + b.columns.reduce((s, c) => s + c.data.byteLength, 0),
  0,
);

/** Milliseconds of each round of `run` (after rounds of warm-up), sorted. */
function time(run: () => number): number[] {
  let check = 0;
  for (let i = 0; i < 5; i++) check += run();
  const ms: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    check += run();
    ms.push(performance.now() - t0);
  }
  if (check === 0) throw new Error('nothing was done');
  return ms.sort((a, b) => a - b);
}

const results = {
  'createColumnEncoder (reference)': time(() => encode(rows).length),
  readColumnBatch: time(() => {
    let n = 0;
    for (const batch of batches) n += readColumnBatch<SpanRow>(batch, SPAN_COLUMNS).length;
    return n;
  }),
};

console.log(
  `${rows.length} span rows, ${SPAN_COLUMNS.length} columns, ${batches.length} batches, ${(bytes / rows.length).toFixed(0)} bytes a row; node ${process.version}; ${rounds} rounds`,
);
console.log('                                   best rows/s   µs/row   median rows/s   µs/row');
for (const [name, ms] of Object.entries(results)) {
  const best = ms[0]!;
  const median = ms[Math.floor(ms.length / 2)]!;
  const perSecond = (t: number) =>
    Math.round(rows.length / (t / 1000))
      .toLocaleString('en-US')
      .padStart(13);
  const micros = (t: number) => ((t * 1000) / rows.length).toFixed(3).padStart(8);
  console.log(
    `${name.padEnd(32)} ${perSecond(best)} ${micros(best)}   ${perSecond(median)} ${micros(median)}`,
  );
}
