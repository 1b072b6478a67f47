import { REFRESH_STEPS, type RefreshStep, createPrometheusText } from '@governor/signals';
import { type TelemetryStore, THREAD_CPU_CLOCK_IS_CPU_TIME } from '@governor/store';

// The CPU budget of ingest on /metrics, one counter per stage (what `governor bench ingest`
// divides by the spans it had acknowledged). Measured by IngestCpu (@governor/store); `http` is
// what is left of the main thread once its other stages are taken out — HTTP parsing, body read,
// routing, responses, reading the workers' rows, and any other main-thread work (a control tick).

/** The stages, in the order a span goes through them. */
export const INGEST_STAGES = [
  'http',
  'decode',
  'normalize',
  'transfer',
  'append',
  'commit',
  'rollup_refresh',
  'checkpoint',
  'other_threads',
] as const;

const HELP = `CPU seconds per ingest stage since start (${THREAD_CPU_CLOCK_IS_CPU_TIME ? 'per-thread CPU clocks' : 'wall time: no per-thread CPU clock on this platform'}): http = main thread outside the other stages (HTTP, body read, responses, rows from the decode workers); decode, normalize, transfer (rows laid out as DuckDB columns and posted to the main thread) on the decode workers or inline; append, commit (Appender flush) on the main thread; rollup_refresh and checkpoint (with the stage moves) = DuckDB's threads while they run, shared between steps running at once; other_threads = the rest of DuckDB's, libuv's and V8's helper threads.`;

export function createIngestStageMetricsProvider(
  store: TelemetryStore,
  refreshStepSeconds: () => Record<RefreshStep, number> | null = () => null,
): () => string {
  return () => {
    const s = store.ingestCpu.snapshot();
    const us = s.stagesUs;
    const stageUs: Record<(typeof INGEST_STAGES)[number], number> = {
      http: s.mainThreadUs - s.mainThreadStagesUs,
      decode: us.decode ?? 0,
      normalize: us.normalize ?? 0,
      transfer: us.transfer ?? 0,
      append: us.append ?? 0,
      commit: us.commit ?? 0,
      rollup_refresh: us.rollup_refresh ?? 0,
      checkpoint: us.checkpoint ?? 0,
      other_threads: s.backgroundThreadsUs - (us.rollup_refresh ?? 0) - (us.checkpoint ?? 0),
    };
    const text = createPrometheusText();
    const stages = text.family('governor_ingest_stage_cpu_seconds_total', 'counter', HELP);
    for (const stage of INGEST_STAGES) stages.sample({ stage }, Math.max(0, stageUs[stage]) / 1e6);
    const threads = text.family(
      'governor_ingest_thread_cpu_seconds_total',
      'counter',
      'CPU seconds of the process by thread group: main (appends, HTTP), decode_workers, other (DuckDB, libuv, V8 helpers).',
    );
    threads.sample({ threads: 'main' }, s.mainThreadUs / 1e6);
    threads.sample({ threads: 'decode_workers' }, s.foregroundThreadsUs / 1e6);
    threads.sample({ threads: 'other' }, s.backgroundThreadsUs / 1e6);
    const steps = refreshStepSeconds();
    if (steps) {
      const family = text.family(
        'governor_rollup_refresh_step_seconds_total',
        'counter',
        "Wall-clock seconds of each step of the request rollup's refresh since start, every run counted (a read's and the background's): plan, known_facts, new_spans, trace_facts, pool_fill, old_facts, tasks, delete, write (task columns computed as the rows are written), state, commit, other. Where the refresh's time goes, and which step grows with the rollup's history.",
      );
      for (const step of REFRESH_STEPS) family.sample({ step }, steps[step]);
    }
    return text.toString();
  };
}
