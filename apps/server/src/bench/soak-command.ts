import { writeFileSync } from 'node:fs';
import { type ParsedArgs, flagNumber, flagString } from '../cli/parse-args.ts';
import { runSoak } from './soak-run.ts';

export const BENCH_SOAK_USAGE = `governor bench soak [--minutes 10] [--fraction 0.5] [--measure-s 240] [--interval-s 30]
                    [--rate SPANS_PER_S] [--batch 500] [--retention-ttl-hours 0.05] [--heavy-reads]
                    [--duckdb-threads N]
                    [--json FILE]`;

const signed = (v: number | null) => (v === null ? '–' : `${v > 0 ? '+' : ''}${v}`);

/** `governor bench soak`: prints the interval table and a summary; exit 1 if an acknowledged span is missing. */
export async function runBenchSoakCommand(args: ParsedArgs): Promise<number> {
  const result = await runSoak({
    minutes: flagNumber(args, 'minutes') ?? 10,
    fraction: flagNumber(args, 'fraction') ?? 0.5,
    rateSpansPerS: flagNumber(args, 'rate'),
    measureSeconds: flagNumber(args, 'measure-s') ?? 240,
    intervalSeconds: flagNumber(args, 'interval-s') ?? 30,
    spansPerBatch: flagNumber(args, 'batch') ?? 500,
    retentionTtlHours: flagNumber(args, 'retention-ttl-hours') ?? 0.05,
    heavyReads: args.flags['heavy-reads'] === true,
    duckdbThreads: flagNumber(args, 'duckdb-threads'),
    onProgress: (line) => process.stdout.write(`${line}\n`),
  });
  const r = result;
  const lines = [
    '',
    r.capacitySpansPerS === null
      ? `held the given ${r.targetSpansPerS.toLocaleString('en-US')} spans/s for ${r.minutes} min`
      : `capacity ${r.capacitySpansPerS.toLocaleString('en-US')} spans/s with the request rollup keeping up (${r.ingestOnlySpansPerS?.toLocaleString('en-US')} acknowledged in the measurement's second half)${r.capacityWithoutReadsSpansPerS === null ? '' : ` under the heavy reads, ${r.capacityWithoutReadsSpansPerS.toLocaleString('en-US')} without them`}; held ${r.targetSpansPerS.toLocaleString('en-US')} spans/s for ${r.minutes} min`,
    `acknowledged ${r.ackedSpans.toLocaleString('en-US')} spans, stored ${r.storedSpans.toLocaleString('en-US')}, lost ${r.lostSpans}; refused requests ${r.refusedRequests}${
      r.refusedRequests > 0
        ? ` (${Object.entries(r.refusalReasons)
            .map(([k, n]) => `${n}× ${k}`)
            .join(', ')})`
        : ''
    }, failed ${r.failedRequests}${
      r.failedRequests > 0
        ? ` (${Object.entries(r.failureReasons)
            .map(([k, n]) => `${n}× ${k}`)
            .join(', ')})`
        : ''
    }, skipped (64 in flight) ${r.skippedRequests}`,
    `retention: ${r.retention.runs} runs exported ${r.retention.exportedSpans.toLocaleString('en-US')} spans to ${r.retention.exportFiles} Parquet files during the run, in ${r.retention.sliceSeconds} s of slices (longest ${r.retention.maxSliceSeconds} s)${r.retention.slices.length > 0 ? `; slices (s into the hold: rows, s): ${r.retention.slices.map((x) => `${x.atS}: ${x.rows.toLocaleString('en-US')}, ${x.seconds}`).join('; ')}` : ''}`,
    `server RSS: ${r.rss.startMiB} MiB at the start of the hold, ${r.rss.endMiB} MiB at the end, max sampled ${r.rss.maxMiB} MiB, peak ${r.rss.peakMiB ?? '–'} MiB; trend (least squares over ${r.rss.samples} samples, every 2 s) ${signed(r.rss.secondHalfMiBPerMin)} MiB/min over the second half, ${signed(r.rss.afterFirstTwoMinutesMiBPerMin)} MiB/min after the first two minutes; median per minute: ${r.rss.perMinuteMedianMiB.map((m) => m ?? '–').join(', ')} MiB`,
    `ack latency over the hold: p50 ${r.ack.p50Ms} ms, p99 ${r.ack.p99Ms} ms, max ${r.ack.maxMs} ms (the load generator's own event-loop delay: p99 ${r.clientLoopDelay.p99Ms} ms, max ${r.clientLoopDelay.maxMs} ms)`,
    ...(r.heavyReads
      ? [
          `heavy reads during the hold: ${r.heavyReads.count} answered (p50 ${r.heavyReads.p50Ms?.toFixed(0) ?? '–'} ms, max ${r.heavyReads.maxMs?.toFixed(0) ?? '–'} ms), ${r.heavyReads.failed} failed${
            r.heavyReads.failed > 0
              ? ` (${Object.entries(r.heavyReads.failureReasons)
                  .map(([k, n]) => `${n}× ${k}`)
                  .join(', ')})`
              : ''
          }`,
        ]
      : []),
    `load average (1 min, whole machine): ${r.loadAverage.start} at the start of the hold, ${r.loadAverage.end} at its end`,
    `shutdown on SIGTERM (flush, checkpoint, close): ${(r.shutdownMs / 1000).toFixed(1)} s, exit ${r.shutdownExit}`,
  ];
  for (const line of r.shutdownErrors) lines.push(`  server: ${line.slice(0, 600)}`);
  process.stdout.write(`${lines.join('\n')}\n`);
  const json = flagString(args, 'json');
  if (json) writeFileSync(json, `${JSON.stringify(result, null, 2)}\n`);
  return r.lostSpans === 0 && r.failedRequests === 0 && r.shutdownExit === 0 ? 0 : 1;
}
