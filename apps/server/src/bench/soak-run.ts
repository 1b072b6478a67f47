import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { join } from 'node:path';
import { quantileContOfSorted } from '@governor/conventions';
import { createSoakBatchSource } from './soak-batch-source.ts';
import { createHeavyReads } from './soak-heavy-reads.ts';
import { type GovernorProcess, spawnGovernorProcess } from './spawn-governor-process.ts';

/**
 * The load generators close a connection idle this long, well before the server does
 * (KEEP_ALIVE_TIMEOUT_MS): Node's agent keeps idle sockets for good unless given a `timeout`, and a
 * request sent on one the server has just closed fails with ECONNRESET (the 10-minute soak lost 18
 * requests that way, 72 s after a latency spike had opened extra connections).
 */
export const IDLE_SOCKET_TIMEOUT_MS = 30_000;

// `governor bench soak`: measures ingest capacity briefly, then holds a fixed fraction of it for
// N minutes against a Governor child process with the control loop, alerts and retention running,
// and reports memory over time, ack latency per interval and acknowledged vs stored spans.

export interface SoakOptions {
  minutes: number;
  /** Share of the measured capacity to hold, e.g. 0.5. */
  fraction: number;
  /** Hold this many spans/s instead, without measuring capacity (runs at one rate compare). */
  rateSpansPerS?: number;
  measureSeconds: number;
  intervalSeconds: number;
  spansPerBatch: number;
  /** Raw-span TTL for the run, so retention exports under load; 0 turns it off. */
  retentionTtlHours: number;
  /** During the hold, one client reads the widest signals back to back (GET /api/signals, series). */
  heavyReads?: boolean;
  /** The server's server.duckdb_threads (its default when absent). */
  duckdbThreads?: number;
  onProgress: (line: string) => void;
}

export interface SoakInterval {
  atS: number;
  rssMiB: number;
  /** DuckDB's buffer manager (duckdb_memory()), part of the RSS. */
  duckdbMiB: number | null;
  /** V8 heap in use, from the server's own /metrics (scraped every interval, as Prometheus would). */
  heapMiB: number | null;
  ackedSpans: number;
  spansPerS: number;
  ackP50Ms: number | null;
  ackP99Ms: number | null;
  ackMaxMs: number | null;
  refused: number;
  inFlight: number;
  /** Batches due but not sent because too many were in flight (the server could not keep up). */
  skipped: number;
  storedSpans: number | null;
  /**
   * The server's main thread (appends, commits, HTTP) per second of the interval: ms on a CPU, and
   * ms runnable but waiting for one — what acknowledgements wait for when the cores are taken.
   */
  mainOnCpuMsPerS: number | null;
  /** Event time between the newest span stored and the newest the request rollup has taken in, s. */
  rollupLagS: number | null;
  /**
   * Group commits in the interval (governor_writer_flush_seconds): the bucket bound under which 99 %
   * of them ended — the event loop is held for each — and how many took over 100 ms.
   */
  commitP99Ms: number | null;
  commitsOver100Ms: number | null;
  /** Seconds the main database spent checkpointing in the interval (governor_writer_checkpoint_seconds). */
  checkpointS: number | null;
  /** CPU ms per second of the request rollup's refresh and of checkpoints (governor_ingest_stage_cpu_seconds_total). */
  refreshCpuMsPerS: number | null;
  checkpointCpuMsPerS: number | null;
  /**
   * Wall ms per second of each step of the request rollup's refresh
   * (governor_rollup_refresh_step_seconds_total), the largest first.
   */
  refreshStepMsPerS: Record<string, number> | null;
  mainWaitingMsPerS: number | null;
  /**
   * Server side, from /metrics: acknowledgements of POST /v1/traces over 250 ms in the interval
   * (governor_http_request_duration_seconds — the server's own time, not the network's or the
   * client's), and the event loop's delay p99 and max (nodejs_eventloop_lag_*).
   */
  serverAcksOver250Ms: number | null;
  loopDelayP99Ms: number | null;
  loopDelayMaxMs: number | null;
}

export interface SoakResult {
  /** Spans/s that ingest and the request rollup sustain together (acked ÷ (measuring + rollup catch-up)); null with a given rate. */
  capacitySpansPerS: number | null;
  /** Spans/s acknowledged in the measurement's second half, whether the rollup kept up or not. */
  ingestOnlySpansPerS: number | null;
  /** With heavyReads, capacitySpansPerS is measured under the heavy reads; this is without them. */
  capacityWithoutReadsSpansPerS: number | null;
  targetSpansPerS: number;
  spansPerBatch: number;
  minutes: number;
  intervals: SoakInterval[];
  ackedSpans: number;
  storedSpans: number;
  lostSpans: number;
  refusedRequests: number;
  /** Why requests were refused (the error code of the 429/503 answer), with counts. */
  refusalReasons: Record<string, number>;
  failedRequests: number;
  /** Why requests failed (HTTP status or socket error code), with counts. */
  failureReasons: Record<string, number>;
  /** Requests due but not sent because 64 were in flight: the server fell behind the schedule. */
  skippedRequests: number;
  retention: {
    runs: number;
    exportedSpans: number;
    exportFiles: number;
    sliceSeconds: number;
    maxSliceSeconds: number;
    slices: { atS: number; rows: number; seconds: number }[];
  };
  rss: {
    startMiB: number;
    endMiB: number;
    /** Of the 2-s samples. */
    maxMiB: number;
    peakMiB: number | null;
    /** RSS samples taken over the hold (every 2 s). */
    samples: number;
    /**
     * Least-squares slope of the 2-s RSS samples over the hold's second half, MiB per minute: after
     * the caches have filled, a flat RSS stays near 0 and a leak shows as a steady climb.
     */
    secondHalfMiBPerMin: number | null;
    /** The same over the whole hold but its first two minutes. */
    afterFirstTwoMinutesMiBPerMin: number | null;
    /** Median of the 2-s samples in each minute of the hold. */
    perMinuteMedianMiB: (number | null)[];
  };
  ack: { p50Ms: number | null; p99Ms: number | null; maxMs: number | null };
  /**
   * The load generator's own event-loop delay over the hold (p99 and max, ms): an ack latency is
   * the server's only when this stays small; a stalled client adds its stall to every ack it times.
   */
  clientLoopDelay: { p99Ms: number; maxMs: number };
  /** From SIGTERM to exit after the hold: flush, final checkpoint, close. */
  shutdownMs: number;
  shutdownExit: number | string;
  /** The server's error lines (pino level ≥ 50), last 10, when it did not exit 0. */
  shutdownErrors: string[];
  /** The heavy-read client's reads during the hold (heavyReads); null without it. */
  heavyReads: {
    count: number;
    failed: number;
    /** HTTP status, error code and time to the answer of each failed read, with counts. */
    failureReasons: Record<string, number>;
    p50Ms: number | null;
    maxMs: number | null;
  } | null;
  /** The machine's 1-minute load average when the hold started and ended (other processes count). */
  loadAverage: { start: number; end: number };
}

const ADMIN_TOKEN = `soak-admin-${Math.random().toString(36).slice(2)}-${Date.now()}`;
const MAX_IN_FLIGHT = 64;
/** How often the hold samples the server's RSS. */
const RSS_SAMPLE_MS = 2000;
/** While measuring capacity, a lane whose request was refused waits this long before the next. */
const REFUSED_PAUSE_MS = 100;

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const log = options.onProgress;
  const dataDir = mkdtempSync(join(tmpdir(), 'governor-soak-'));
  const configFile = join(dataDir, 'soak.yaml');
  writeFileSync(configFile, soakConfig(options));
  let governor: GovernorProcess | null = null;
  try {
    governor = await spawnGovernorProcess({
      dataDir: join(dataDir, 'data'),
      args: ['--config', configFile],
      env: { GOVERNOR_ADMIN_TOKEN: ADMIN_TOKEN, GOVERNOR_LOG_LEVEL: 'warn' },
    });
    const g = governor;
    log(`server allocator: ${g.allocator()} (scripts/run-governor.sh; docs/operations.md, "Memory")`);
    const client = createClient(g.url);
    const source = createSoakBatchSource(options.spansPerBatch, Math.floor(Math.random() * 0xffffffff));
    let nextBatch = 0;
    const send = () => {
      const index = nextBatch++;
      return client.post(source.batch(index, BigInt(Date.now()) * 1_000_000n));
    };

    // 1. Capacity: closed loop, 8 lanes, as fast as acknowledgements come back — ingest alone, and
    // with --heavy-reads once more while the heavy-read client runs, as it will during the hold:
    // the fraction is of what the server sustains under the hold's own reads.
    //
    // Sustains, in steady state: a short burst into an empty store overstates it. On the 2-core
    // machine the first 40 s acknowledged 12.9k spans/s; over 240 s — once checkpoints carry a full
    // WAL, retention exports (raw-span TTL 3 min) and the heavy reads cover a filled store — 7.1k,
    // and the server itself refused the difference (503, rollup behind). A hold at 80 % of the
    // burst figure was an overload. So the measurement runs measureSeconds (default 240, past the
    // soak's retention TTL) and capacity is what was acknowledged in its second half, plus the
    // time the rollup then needed to take those spans in; the rate of every 30 s slot is printed.
    let measuredAcked = 0;
    const measure = async (label: string) => {
      log(
        `measuring ingest capacity${label} for ${options.measureSeconds} s (closed loop, 8 clients, ${source.spansPerBatch} spans/request; capacity from the second half)…`,
      );
      const slotMs = 30_000;
      const slots: number[] = [];
      const refusedBy = new Map<string, number>();
      const failures = new Map<number, number>();
      const measureStarted = performance.now();
      const measureEnd = measureStarted + options.measureSeconds * 1000;
      const halfAt = measureStarted + (options.measureSeconds * 1000) / 2;
      let acked = 0;
      let secondHalf = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (performance.now() < measureEnd) {
            const r = await send();
            const at = performance.now();
            if (r.status === 200 && r.empty) {
              acked += source.spansPerBatch;
              if (at >= halfAt) secondHalf += source.spansPerBatch;
              // A request answered after the end counts in the last slot.
              const lastSlot = Math.ceil((options.measureSeconds * 1000) / slotMs) - 1;
              const slot = Math.min(lastSlot, Math.floor((at - measureStarted) / slotMs));
              slots[slot] = (slots[slot] ?? 0) + source.spansPerBatch;
            } else {
              failures.set(r.status, (failures.get(r.status) ?? 0) + 1);
              const reason = r.code ?? `HTTP ${r.status}`;
              refusedBy.set(reason, (refusedBy.get(reason) ?? 0) + 1);
              // Back off a little, as an exporter would, rather than spin on refusals.
              await new Promise((resolve) => setTimeout(resolve, REFUSED_PAUSE_MS));
            }
          }
        }),
      );
      measuredAcked += acked;
      // Capacity is what ingest and the request rollup sustain together: the rollup (which the
      // reads and ingest's back-pressure wait for) may still be working through the measurement's spans.
      const catchUpStarted = performance.now();
      await waitUntil(async () => rollupCaughtUp(g.url), 600_000).catch(async (error: Error) => {
        const state = await api<{ rows?: unknown[][] }>(g.url, '/api/sql', {
          sql: 'SELECT (SELECT last_rowid FROM request_facts_state WHERE id = 1)::VARCHAR, (SELECT max(rowid) FROM span_store)::VARCHAR, (SELECT last_mode FROM request_facts_state WHERE id = 1), (SELECT refreshed_at FROM request_facts_state WHERE id = 1)::VARCHAR',
        }).catch((e: Error) => ({ rows: [[e.message]] }));
        throw new Error(
          `the request rollup did not take in the measurement's spans within 10 minutes (${error.message}); last refreshed rowid, newest rowid, mode, refreshed at: ${JSON.stringify(state.rows?.[0])}; server output:\n${g.output().slice(-4000)}`,
        );
      });
      const rollupCatchUpS = (performance.now() - catchUpStarted) / 1000;
      const ingestOnly = secondHalf / (options.measureSeconds / 2);
      const capacity = secondHalf / (options.measureSeconds / 2 + rollupCatchUpS);
      const perSlot = Array.from(slots, (n, i) => {
        const seconds = Math.min(slotMs, options.measureSeconds * 1000 - i * slotMs) / 1000;
        return fmt((n ?? 0) / seconds);
      });
      const refusals = [...refusedBy].map(([reason, n]) => `${n}× ${reason}`).join(', ');
      log(`acknowledged spans/s per 30 s: ${perSlot.join(', ')}${refusals ? `; refused ${refusals}` : ''}`);
      log(
        `second half: ${fmt(ingestOnly)} spans/s acknowledged; the request rollup needed ${rollupCatchUpS.toFixed(1)} s more to take them in: ${fmt(capacity)} spans/s${label}`,
      );
      if (capacity === 0) {
        const statuses = [...failures].map(([status, n]) => `${n}× HTTP ${status}`).join(', ');
        throw new Error(
          `no request was acknowledged in the measurement's second half (${statuses}); server output:\n${g.output().slice(-4000)}`,
        );
      }
      // Let the measurement's backlog drain so what follows starts from a steady state.
      await waitUntil(async () => (await readiness(g.url)).queuedRows === 0, 60_000);
      return { ingestOnly, capacity };
    };
    const given = options.rateSpansPerS;
    const alone = given === undefined ? await measure('') : null;
    let readsUntil = Number.POSITIVE_INFINITY;
    const reads = createHeavyReads(g.url, ADMIN_TOKEN);
    const readLoop = options.heavyReads ? reads.loop(() => performance.now() < readsUntil) : null;
    const measured = alone && readLoop ? await measure(' with the heavy reads') : alone;
    // Only the hold's reads are reported.
    reads.reset();
    const target = given ?? measured!.capacity * options.fraction;
    const periodMs = (source.spansPerBatch / target) * 1000;
    log(
      measured
        ? `capacity ≈ ${fmt(measured.capacity)} spans/s${readLoop ? ` under the heavy reads (${fmt(alone!.capacity)} without)` : ''}; holding ${Math.round(options.fraction * 100)}% = ${fmt(target)} spans/s (a request every ${periodMs.toFixed(1)} ms) for ${options.minutes} min`
        : `holding the given ${fmt(target)} spans/s (a request every ${periodMs.toFixed(1)} ms) for ${options.minutes} min`,
    );

    // 2. Hold: open loop (requests leave on schedule whatever the latency), sampled every interval.
    const intervals: SoakInterval[] = [];
    const allLatencies: number[] = [];
    let acked = 0;
    let refused = 0;
    const refusalReasons = new Map<string, number>();
    let failed = 0;
    let inFlight = 0;
    let skipped = 0;
    let window: number[] = [];
    let windowAcked = 0;
    let windowRefused = 0;
    let windowSkipped = 0;
    const pending = new Set<Promise<void>>();
    const failures = new Map<string, number>();
    const noteFailure = (reason: string) => failures.set(reason, (failures.get(reason) ?? 0) + 1);
    const rssMiB = () => (g.memory()?.rssBytes ?? 0) / 1024 / 1024;
    // The baselines are taken before the schedule's clock starts: a /metrics scrape reads DuckDB's
    // storage figures and can take seconds on a busy server, and no request may fall due meanwhile
    // (they would all leave at once when it returned, measuring the generator, not the server).
    let lastScrape = await scrapeMetrics(g.url).catch(() => null);
    const startRss = rssMiB();
    const startLoad = loadavg()[0]!;
    let lastCpu = g.cpu();
    const started = performance.now();
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    const end = started + options.minutes * 60_000;
    let due = started;
    let nextSample = started + options.intervalSeconds * 1000;
    // RSS every 2 s: the 30-s rows alone give a trend too noisy to call flat or rising (the buffer
    // pool and the V8 heap swing by hundreds of MiB between two rows).
    const rssSamples: { atS: number; rssMiB: number }[] = [];
    let nextRssSample = started;
    const header =
      'time    RSS MiB  DuckDB MiB  heap MiB   spans/s   ack p50 ms   ack p99 ms   ack max ms   refused   skipped     stored   main cpu ms/s   main wait ms/s   rollup lag s   commit p99 ms   commits >100ms   checkpoint s   refresh cpu ms/s   checkpoint cpu ms/s   server acks >250ms   loop p99 ms   loop max ms';
    log(header);
    let sampling: Promise<void> = Promise.resolve();
    readsUntil = end;

    while (performance.now() < end) {
      const now = performance.now();
      while (due <= now) {
        due += periodMs;
        if (inFlight >= MAX_IN_FLIGHT) {
          skipped++;
          windowSkipped++;
          continue;
        }
        inFlight++;
        const sentAt = performance.now();
        const p = send().then(
          (r) => {
            const ms = performance.now() - sentAt;
            if (r.status === 200 && r.empty) {
              acked += source.spansPerBatch;
              windowAcked += source.spansPerBatch;
              window.push(ms);
              allLatencies.push(ms);
            } else if (r.status === 429 || r.status === 503) {
              refused++;
              windowRefused++;
              const reason = r.code ?? `HTTP ${r.status}`;
              refusalReasons.set(reason, (refusalReasons.get(reason) ?? 0) + 1);
            } else {
              failed++;
              noteFailure(`HTTP ${r.status}`);
            }
          },
          (error: Error & { code?: string; reusedSocket?: boolean }) => {
            failed++;
            noteFailure(
              `${error.code ?? error.message} on a ${error.reusedSocket ? 'reused keep-alive' : 'new'} connection at ${Math.round((performance.now() - started) / 1000)} s`,
            );
          },
        );
        const tracked = p.finally(() => {
          inFlight--;
          pending.delete(tracked);
        });
        pending.add(tracked);
      }
      if (now >= nextRssSample) {
        nextRssSample += RSS_SAMPLE_MS;
        rssSamples.push({ atS: (now - started) / 1000, rssMiB: rssMiB() });
      }
      if (now >= nextSample) {
        nextSample += options.intervalSeconds * 1000;
        // Snapshot and reset the window now; the server-side figures are read without holding up
        // the schedule (under load those requests take a while too).
        const latencies = window.sort((a, b) => a - b);
        const cpu = g.cpu();
        const perS = (now: number | undefined, before: number | undefined) =>
          now === undefined || before === undefined
            ? null
            : Math.round((now - before) / options.intervalSeconds);
        const row: SoakInterval = {
          atS: Math.round((now - started) / 1000),
          rssMiB: Math.round(rssMiB()),
          duckdbMiB: null,
          heapMiB: null,
          ackedSpans: windowAcked,
          spansPerS: Math.round(windowAcked / options.intervalSeconds),
          ackP50Ms: quantile(latencies, 0.5),
          ackP99Ms: quantile(latencies, 0.99),
          ackMaxMs: quantile(latencies, 1),
          refused: windowRefused,
          inFlight,
          skipped: windowSkipped,
          storedSpans: null,
          mainOnCpuMsPerS: perS(cpu?.mainThreadOnCpuMs, lastCpu?.mainThreadOnCpuMs),
          mainWaitingMsPerS: perS(cpu?.mainThreadWaitingMs, lastCpu?.mainThreadWaitingMs),
          rollupLagS: null,
          commitP99Ms: null,
          commitsOver100Ms: null,
          checkpointS: null,
          refreshCpuMsPerS: null,
          checkpointCpuMsPerS: null,
          refreshStepMsPerS: null,
          serverAcksOver250Ms: null,
          loopDelayP99Ms: null,
          loopDelayMaxMs: null,
        };
        lastCpu = cpu;
        window = [];
        windowAcked = 0;
        windowRefused = 0;
        windowSkipped = 0;
        const previous = sampling;
        sampling = (async () => {
          const [stored, duckdb, scrape, lag] = await Promise.all([
            countSpans(g.url).catch(() => null),
            duckdbMemoryMiB(g.url).catch(() => null),
            scrapeMetrics(g.url).catch(() => null),
            rollupLagS(g.url).catch(() => null),
          ]);
          const writer = scrape && lastScrape ? writerDelta(lastScrape, scrape) : null;
          if (scrape) lastScrape = scrape;
          Object.assign(row, {
            storedSpans: stored,
            duckdbMiB: duckdb,
            heapMiB: scrape?.heapMiB ?? null,
            rollupLagS: lag,
            ...writer,
          });
          await previous;
          intervals.push(row);
          log(formatRow(row));
        })();
      }
      await sleepMs(Math.max(0, Math.min(due, nextSample, nextRssSample) - performance.now()));
    }
    await Promise.all(pending);
    await sampling;
    await readLoop;

    // 3. Acknowledged vs stored: staged rows reach the main tables after the current checkpoint.
    log('load stopped; waiting for every acknowledged span to be queryable…');
    let stored = 0;
    // The capacity measurement's spans are in the store too.
    const expected = measuredAcked + acked;
    await waitUntil(async () => {
      stored = await countSpans(g.url);
      return stored >= expected;
    }, 120_000).catch(() => undefined);
    const retention = await retentionTotals(g.url, Date.now() - (performance.now() - started));
    const sortedAll = allLatencies.sort((a, b) => a - b);
    loopDelay.disable();
    const memory = g.memory();
    const endRss = rssMiB();
    const endLoad = loadavg()[0]!;
    const stoppedAt = performance.now();
    g.child.kill('SIGTERM');
    const shutdownExit = await g.exited;
    const shutdownMs = Math.round(performance.now() - stoppedAt);
    const shutdownErrors =
      shutdownExit === 0
        ? []
        : (() => {
            // The shutdown's own failure first: reads cancelled by it log errors of their own.
            const errors = g
              .output()
              .split('\n')
              .filter((line) => /"level":(5|6)\d/.test(line));
            const shutdown = errors.filter((line) => /shutdown|"level":6\d/i.test(line));
            return [...shutdown, ...errors.filter((line) => !shutdown.includes(line))].slice(0, 10);
          })();
    governor = null;
    return {
      shutdownMs,
      shutdownExit,
      shutdownErrors,
      heavyReads: readLoop ? reads.summary() : null,
      loadAverage: { start: Math.round(startLoad * 100) / 100, end: Math.round(endLoad * 100) / 100 },
      capacitySpansPerS: measured ? Math.round(measured.capacity) : null,
      ingestOnlySpansPerS: measured ? Math.round(measured.ingestOnly) : null,
      capacityWithoutReadsSpansPerS: readLoop && alone ? Math.round(alone.capacity) : null,
      targetSpansPerS: Math.round(target),
      spansPerBatch: source.spansPerBatch,
      minutes: options.minutes,
      intervals,
      ackedSpans: expected,
      storedSpans: stored,
      lostSpans: expected - stored,
      refusedRequests: refused,
      refusalReasons: Object.fromEntries(refusalReasons),
      failedRequests: failed,
      failureReasons: Object.fromEntries(failures),
      skippedRequests: skipped,
      retention,
      rss: {
        startMiB: Math.round(startRss),
        endMiB: Math.round(endRss),
        maxMiB: Math.round(Math.max(startRss, ...rssSamples.map((x) => x.rssMiB))),
        peakMiB: memory ? Math.round(memory.peakRssBytes / 1024 / 1024) : null,
        samples: rssSamples.length,
        secondHalfMiBPerMin: slopePerMin(rssSamples.filter((x) => x.atS > (options.minutes * 60) / 2)),
        afterFirstTwoMinutesMiBPerMin: slopePerMin(rssSamples.filter((x) => x.atS > 120)),
        perMinuteMedianMiB: perMinuteMedians(rssSamples, options.minutes),
      },
      clientLoopDelay: {
        p99Ms: Math.round(loopDelay.percentile(99) / 1e5) / 10,
        maxMs: Math.round(loopDelay.max / 1e5) / 10,
      },
      ack: {
        p50Ms: quantile(sortedAll, 0.5),
        p99Ms: quantile(sortedAll, 0.99),
        maxMs: quantile(sortedAll, 1),
      },
    };
  } finally {
    if (governor) {
      governor.child.kill('SIGTERM');
      await governor.exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function soakConfig(options: SoakOptions): string {
  // The synthetic fleet's pools, so signals, the control loop and alert rules have real groups.
  return `server:
  checkpoint_interval_s: 30
${options.duckdbThreads === undefined ? '' : `  duckdb_threads: ${options.duckdbThreads}\n`}pools:
  - { name: llama-8b-h100, gpu_type: H100, gpus_per_replica: 1, peak_tokens_per_s_per_replica: 2500 }
  - { name: llama-70b-h100, gpu_type: H100, gpus_per_replica: 4, peak_tokens_per_s_per_replica: 900 }
  - { name: qwen-32b-a100, gpu_type: A100, gpus_per_replica: 2, peak_tokens_per_s_per_replica: 1200 }
pricing:
  gpu_hour_usd: { H100: 4.0, A100: 2.5 }
slo:
  ttft_ms: 500
  e2e_ms: 5000
retention:
  spans_ttl_hours: ${options.retentionTtlHours}
  run_interval_s: 60
`;
}

interface PostResult {
  status: number;
  /** An OTLP response without partial_success: every span accepted. */
  empty: boolean;
  /** The Governor error code of an error answer (`GOV_ERR_…`), else null. */
  code: string | null;
}

function createClient(url: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: MAX_IN_FLIGHT, timeout: IDLE_SOCKET_TIMEOUT_MS });
  const { hostname, port } = new URL(url);
  return {
    post(body: Buffer): Promise<PostResult> {
      return new Promise((resolve, reject) => {
        const req = httpRequest(
          {
            agent,
            hostname,
            port,
            method: 'POST',
            path: '/v1/traces',
            headers: {
              'content-type': 'application/x-protobuf',
              'content-length': body.length,
              authorization: `Bearer ${ADMIN_TOKEN}`,
            },
          },
          (res) => {
            let bytes = 0;
            let text = '';
            res.on('data', (chunk: Buffer) => {
              bytes += chunk.length;
              // Error answers are small JSON; a 200's protobuf body is only counted.
              if (res.statusCode !== 200 && text.length < 4096) text += chunk.toString('utf8');
            });
            res.on('end', () =>
              resolve({
                status: res.statusCode ?? 0,
                empty: bytes === 0,
                // The google.rpc.Status message starts with Governor's code (otlpErrorMessage).
                code: /GOV_ERR_[A-Z_]+/.exec(text)?.[0] ?? null,
              }),
            );
            res.on('error', reject);
          },
        );
        // A reset on a connection the agent reused is the keep-alive race (the server closed it as
        // the request left); on a fresh one the server refused or dropped the request itself.
        req.on('error', (error: Error & { reusedSocket?: boolean }) => {
          error.reusedSocket = req.reusedSocket;
          reject(error);
        });
        req.end(body);
      });
    },
  };
}

async function api<T>(url: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return (await response.json()) as T;
}

async function readiness(url: string): Promise<{ queuedRows: number }> {
  return api<{ queuedRows: number }>(url, '/api/ready');
}

async function countSpans(url: string): Promise<number> {
  const result = await api<{ rows?: number[][] }>(url, '/api/sql', { sql: 'SELECT count(*) FROM spans' });
  return Number(result.rows?.[0]?.[0] ?? Number.NaN);
}

async function duckdbMemoryMiB(url: string): Promise<number> {
  const result = await api<{ rows?: number[][] }>(url, '/api/sql', {
    sql: 'SELECT sum(memory_usage_bytes) FROM duckdb_memory()',
  });
  return Math.round(Number(result.rows?.[0]?.[0] ?? Number.NaN) / 1024 / 1024);
}

/** True when the request rollup holds every span stored so far. */
async function rollupCaughtUp(url: string): Promise<boolean> {
  const result = await api<{ rows?: unknown[][] }>(url, '/api/sql', {
    sql: 'SELECT coalesce((SELECT last_rowid FROM request_facts_state WHERE id = 1) >= (SELECT max(rowid) FROM span_store), true)',
  });
  return result.rows?.[0]?.[0] === true;
}

async function rollupLagS(url: string): Promise<number> {
  const result = await api<{ rows?: number[][] }>(url, '/api/sql', {
    sql: 'SELECT ((SELECT max(end_ns) FROM span_store) - (SELECT newest_span_end_ns FROM request_facts_state WHERE id = 1)) / 1e9',
  });
  return Math.round(Number(result.rows?.[0]?.[0] ?? Number.NaN) * 10) / 10;
}

interface MetricsScrape {
  /** performance.now() when the scrape was answered. */
  atMs: number;
  heapMiB: number;
  /** governor_writer_flush_seconds_bucket: cumulative count by bound (s), +Inf last. */
  flushBuckets: [number, number][];
  checkpointSumS: number;
  /** governor_ingest_stage_cpu_seconds_total of the rollup refresh and of checkpoints. */
  refreshCpuS: number;
  checkpointCpuS: number;
  /** governor_rollup_refresh_step_seconds_total by step. */
  refreshStepS: Map<string, number>;
  /** POST /v1/traces answers, all and within 250 ms (governor_http_request_duration_seconds). */
  tracesAcks: number;
  tracesAcksWithin250Ms: number;
  loopDelayP99S: number;
  loopDelayMaxS: number;
}

/** What the soak reads from the server's /metrics each interval, as Prometheus would scrape it. */
async function scrapeMetrics(url: string): Promise<MetricsScrape> {
  const response = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  const lines = (await response.text()).split('\n');
  const atMs = performance.now();
  const value = (prefix: string) =>
    Number(
      lines
        .find((l) => l.startsWith(prefix))
        ?.split(' ')
        .at(-1) ?? Number.NaN,
    );
  const flushBuckets: [number, number][] = [];
  const refreshStepS = new Map<string, number>();
  for (const line of lines) {
    const step = /^governor_rollup_refresh_step_seconds_total\{step="(\w+)"\} (\S+)$/.exec(line);
    if (step) refreshStepS.set(step[1]!, Number(step[2]));
    const m = /^governor_writer_flush_seconds_bucket\{le="([^"]+)"\} (\S+)$/.exec(line);
    if (m) flushBuckets.push([m[1] === '+Inf' ? Number.POSITIVE_INFINITY : Number(m[1]), Number(m[2])]);
  }
  const tracesRoute = 'governor_http_request_duration_seconds_bucket{method="POST",route="/v1/traces",';
  return {
    atMs,
    heapMiB: Math.round(value('nodejs_heap_used_bytes ') / 1024 / 1024),
    flushBuckets,
    checkpointSumS: value('governor_writer_checkpoint_seconds_sum '),
    refreshCpuS: value('governor_ingest_stage_cpu_seconds_total{stage="rollup_refresh"} '),
    checkpointCpuS: value('governor_ingest_stage_cpu_seconds_total{stage="checkpoint"} '),
    refreshStepS,
    tracesAcks: value(`${tracesRoute}le="+Inf"} `),
    tracesAcksWithin250Ms: value(`${tracesRoute}le="0.25"} `),
    loopDelayP99S: value('nodejs_eventloop_lag_p99_seconds '),
    loopDelayMaxS: value('nodejs_eventloop_lag_max_seconds '),
  };
}

/** The interval's commits and checkpoint time, from two scrapes. */
function writerDelta(before: MetricsScrape, after: MetricsScrape) {
  const counts = after.flushBuckets.map(
    ([bound, n], i) => [bound, n - (before.flushBuckets[i]?.[1] ?? 0)] as const,
  );
  const total = counts.at(-1)?.[1] ?? 0;
  const p99 = total > 0 ? counts.find(([, n]) => n >= total * 0.99)?.[0] : undefined;
  const under100 = counts.find(([bound]) => bound >= 0.1)?.[1] ?? total;
  const ms = (s: number) => (Number.isFinite(s) ? Math.round(s * 1000) : null);
  const over250 =
    after.tracesAcks - after.tracesAcksWithin250Ms - (before.tracesAcks - before.tracesAcksWithin250Ms);
  return {
    serverAcksOver250Ms: Number.isFinite(over250) ? over250 : null,
    loopDelayP99Ms: ms(after.loopDelayP99S),
    loopDelayMaxMs: ms(after.loopDelayMaxS),
    commitP99Ms: p99 === undefined ? null : p99 * 1000,
    commitsOver100Ms: total - under100,
    checkpointS: Math.round((after.checkpointSumS - before.checkpointSumS) * 10) / 10,
    refreshCpuMsPerS: cpuMsPerS(before.refreshCpuS, after.refreshCpuS, before.atMs, after.atMs),
    checkpointCpuMsPerS: cpuMsPerS(before.checkpointCpuS, after.checkpointCpuS, before.atMs, after.atMs),
    refreshStepMsPerS:
      after.refreshStepS.size === 0
        ? null
        : Object.fromEntries(
            [...after.refreshStepS]
              .map(
                ([step, s]) =>
                  [
                    step,
                    cpuMsPerS(before.refreshStepS.get(step) ?? 0, s, before.atMs, after.atMs) ?? 0,
                  ] as const,
              )
              .sort((a, b) => b[1] - a[1]),
          ),
  };
}

/** CPU ms per wall second between two readings of a CPU-seconds counter (null when either is missing). */
function cpuMsPerS(beforeS: number, afterS: number, beforeMs: number, afterMs: number): number | null {
  if (!Number.isFinite(beforeS) || !Number.isFinite(afterS) || afterMs <= beforeMs) return null;
  return Math.round(((afterS - beforeS) * 1e6) / (afterMs - beforeMs));
}

async function retentionTotals(url: string, holdStartedAtMs: number) {
  const slices = await api<{ rows?: [string, number, number][] }>(url, '/api/sql', {
    sql: "SELECT epoch_ms(started_at)::VARCHAR, rows_exported, duration_ms FROM retention_runs WHERE target = 'spans' AND state = 'published' ORDER BY started_at",
  });
  const result = await api<{ rows?: number[][] }>(url, '/api/sql', {
    sql: "SELECT count(DISTINCT split_part(run_id, '-', 1)), coalesce(sum(rows_exported), 0), coalesce(sum(json_array_length(files)), 0), coalesce(sum(duration_ms), 0), coalesce(max(duration_ms), 0) FROM retention_runs WHERE target = 'spans' AND state = 'published'",
  });
  const [runs, exported, files, totalMs, maxMs] = result.rows?.[0] ?? [0, 0, 0, 0, 0];
  return {
    runs: Number(runs),
    exportedSpans: Number(exported),
    exportFiles: Number(files),
    /** Wall time of the slices (export, verify, delete, commit, publish), summed, and the longest. */
    sliceSeconds: Math.round(Number(totalMs) / 100) / 10,
    maxSliceSeconds: Math.round(Number(maxMs) / 100) / 10,
    /** Each slice: when it started (s into the hold, by the server's clock), its rows and seconds. */
    slices: (slices.rows ?? []).map(([at, rows, ms]) => ({
      atS: Math.round((Number(at) - holdStartedAtMs) / 100) / 10,
      rows: Number(rows),
      seconds: Math.round(Number(ms) / 100) / 10,
    })),
  };
}

/** Least-squares slope of rssMiB over atS, per minute; null with fewer than 3 samples. */
export function slopePerMin(samples: readonly { atS: number; rssMiB: number }[]): number | null {
  if (samples.length < 3) return null;
  const n = samples.length;
  const mx = samples.reduce((a, x) => a + x.atS, 0) / n;
  const my = samples.reduce((a, x) => a + x.rssMiB, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const x of samples) {
    sxy += (x.atS - mx) * (x.rssMiB - my);
    sxx += (x.atS - mx) ** 2;
  }
  return sxx === 0 ? null : Math.round((sxy / sxx) * 60 * 10) / 10;
}

/** Median RSS of each whole minute of samples (null for a minute without any). */
export function perMinuteMedians(
  samples: readonly { atS: number; rssMiB: number }[],
  minutes: number,
): (number | null)[] {
  return Array.from({ length: minutes }, (_, m) => {
    const inMinute = samples
      .filter((x) => x.atS >= m * 60 && x.atS < (m + 1) * 60)
      .map((x) => x.rssMiB)
      .sort((a, b) => a - b);
    return inMinute.length === 0 ? null : Math.round(quantileContOfSorted(inMinute, 0.5));
  });
}

/** DuckDB's quantile_cont of sorted values, to 0.1 ms; null when there are none. */
function quantile(sorted: readonly number[], q: number): number | null {
  return sorted.length === 0 ? null : Math.round(quantileContOfSorted(sorted, q) * 10) / 10;
}

function formatRow(r: SoakInterval): string {
  const n = (v: number | null, width: number) => (v === null ? '–' : String(v)).padStart(width);
  const mmss = `${String(Math.floor(r.atS / 60)).padStart(2, '0')}:${String(r.atS % 60).padStart(2, '0')}`;
  return `${mmss.padEnd(5)} ${n(r.rssMiB, 9)} ${n(r.duckdbMiB, 11)} ${n(r.heapMiB, 9)} ${n(r.spansPerS, 9)} ${n(r.ackP50Ms, 12)} ${n(r.ackP99Ms, 12)} ${n(r.ackMaxMs, 12)} ${n(r.refused, 9)} ${n(r.skipped, 9)} ${n(r.storedSpans, 10)} ${n(r.mainOnCpuMsPerS, 15)} ${n(r.mainWaitingMsPerS, 16)} ${n(r.rollupLagS, 14)} ${n(r.commitP99Ms, 15)} ${n(r.commitsOver100Ms, 16)} ${n(r.checkpointS, 14)} ${n(r.refreshCpuMsPerS, 20)} ${n(r.checkpointCpuMsPerS, 23)} ${n(r.serverAcksOver250Ms, 20)} ${n(r.loopDelayP99Ms, 13)} ${n(r.loopDelayMaxMs, 13)}${steps(r.refreshStepMsPerS)}`;
}

/** The refresh's largest steps, as "  refresh: trace_facts 230, task_columns 60, …" (ms/s). */
function steps(perStep: Record<string, number> | null): string {
  if (!perStep) return '';
  const top = Object.entries(perStep)
    .filter(([, ms]) => ms > 0)
    .slice(0, 6);
  return top.length === 0 ? '' : `   refresh ms/s: ${top.map(([step, ms]) => `${step} ${ms}`).join(', ')}`;
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

function sleepMs(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitUntil(condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleepMs(250);
  }
}
