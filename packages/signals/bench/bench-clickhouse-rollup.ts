import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { createHopClassifier, normalizeTraceRequest } from '@governor/otlp';
import { syntheticTraceRequest } from '@governor/otlp/fixtures';
import { startClickHouseForSignals } from '../test/clickhouse-harness.ts';
import { testConfig } from '../test/store-harness.ts';
import { createClickHouseRollup } from '../src/rollup/roll-up-on-clickhouse.ts';

// The ClickHouse rollup (roll-up-on-clickhouse.ts) on a two-shard cluster on this machine: rounds
// of N fresh spans (new traces) written through the ClickHouse writer, each rolled up in one call;
// prints spans rolled up per second of wall clock and of process CPU (Node and the scratch DuckDB;
// the ClickHouse servers' own CPU is not counted), beside the same spans' insert.
//
//   node --import tsx packages/signals/bench/bench-clickhouse-rollup.ts [--sizes 2000,10000,40000] [--rounds 3]

const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '2000,10000,40000' },
    rounds: { type: 'string', default: '3' },
  },
});
const sizes = args.sizes!.split(',').map(Number);
const rounds = Number(args.rounds);
const classifier = createHopClassifier();
const config = testConfig();
const ch = await startClickHouseForSignals();
const rollup = createClickHouseRollup(ch.io, config);
console.log(
  `ClickHouse rollup, 2 shards on loopback; load average ${loadavg()[0]!.toFixed(1)} on this machine`,
);
console.log(
  '   spans  round   insert ms   rollup ms   rollup CPU ms   spans/s (wall)   µs CPU/span   read / scratch / refresh / write ms',
);
let seed = 1;
let startNs = 1_767_225_600_000_000_000n;
try {
  for (const size of sizes) {
    for (let round = 0; round < rounds; round++) {
      const rows = normalizeTraceRequest(
        syntheticTraceRequest({
          spans: size,
          seed: seed++,
          startNs,
          idPrefix: seed.toString(16).padStart(8, '0'),
        }),
        { classifier, aliases: {} },
      ).rows;
      startNs += 60_000_000_000n;
      const t0 = performance.now();
      await ch.writer.write(rows, []);
      const t1 = performance.now();
      const cpu0 = process.cpuUsage();
      const result = await rollup.rollUp(rows, BigInt(seed));
      const t2 = performance.now();
      const cpu = process.cpuUsage(cpu0);
      const cpuMs = (cpu.user + cpu.system) / 1000;
      console.log(
        `${String(rows.length).padStart(8)}  ${String(round + 1).padStart(5)}  ${(t1 - t0).toFixed(0).padStart(10)}  ${(t2 - t1).toFixed(0).padStart(10)}  ${cpuMs.toFixed(0).padStart(14)}  ${Math.round(
          rows.length / ((t2 - t1) / 1000),
        )
          .toLocaleString('en-US')
          .padStart(15)}  ${((cpuMs * 1000) / rows.length).toFixed(1).padStart(12)}   ${Object.values(
          result.stepMs,
        )
          .map((v) => v.toFixed(0))
          .join(' / ')}`,
      );
    }
  }
} finally {
  await rollup.close();
  await ch.stop();
}
