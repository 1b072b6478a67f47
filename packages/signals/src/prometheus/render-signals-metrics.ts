import { UTILIZATION_BOUNDS } from '@governor/conventions';
import { HOP_KEYS, type SignalGroupDetail, type SignalsSnapshotDetail } from '../signal-group.ts';
import type { PrometheusText } from './prometheus-text.ts';

// The signals as Prometheus families: one series per pool (label `pool`) plus the fleet (no `pool`
// label), over one window. Latencies in seconds and ratios 0–1, as Prometheus conventions ask;
// percentiles are summaries' `quantile` samples. A value without data is left out.

const MS = 1 / 1000;

interface Gauge {
  name: string;
  help: string;
  read: (g: SignalGroupDetail) => number | null;
}

const GAUGES: readonly Gauge[] = [
  { name: 'governor_requests', help: 'Requests (traces) that ended in the window.', read: (g) => g.requests },
  {
    name: 'governor_error_ratio',
    help: 'Share of requests that failed (error, timeout, rejected, preempted).',
    read: (g) => g.errorRate,
  },
  {
    name: 'governor_preemption_ratio',
    help: 'Share of requests preempted at least once.',
    read: (g) => g.preemptionRate,
  },
  { name: 'governor_retry_ratio', help: 'Retries (attempt > 1) per request.', read: (g) => g.retryRatio },
  {
    name: 'governor_cache_hit_ratio',
    help: 'Share of requests with a prefix-cache hit.',
    read: (g) => g.cacheHitRate,
  },
  {
    name: 'governor_goodput_ratio',
    help: 'Share of tasks that succeeded within the SLO.',
    read: (g) => g.goodput,
  },
  {
    name: 'governor_utilization_ratio',
    help: `memory_util / compute_util (> ${UTILIZATION_BOUNDS.memoryAbove} memory-bound, < ${UTILIZATION_BOUNDS.computeBelow} compute-bound).`,
    read: (g) => g.utilizationRatio,
  },
  {
    name: 'governor_memory_utilization_ratio',
    help: 'Mean KV-cache usage (0-1).',
    read: (g) => g.memoryUtil,
  },
  {
    name: 'governor_compute_utilization_ratio',
    help: 'Achieved tokens/s per replica / peak tokens/s per replica.',
    read: (g) => g.computeUtil,
  },
  {
    name: 'governor_success_per_dollar',
    help: 'Successful tasks per US dollar of fleet cost in the window.',
    read: (g) => g.successPerDollar,
  },
  {
    name: 'governor_cost_per_successful_task_usd',
    help: 'Fleet cost per successful task (USD).',
    read: (g) => g.costPerSuccessfulTaskUsd,
  },
  {
    name: 'governor_cost_usd',
    help: 'Fleet cost in the window (USD): replica-time x GPUs x $/GPU-hour, else explicit governor.cost.usd.',
    read: (g) => g.costUsd,
  },
  {
    name: 'governor_tasks',
    help: 'Tasks that ended in the window (pending ones excluded).',
    read: (g) => g.tasks,
  },
  {
    name: 'governor_successful_tasks',
    help: 'Tasks that ended in the window and succeeded.',
    read: (g) => g.successfulTasks,
  },
  {
    name: 'governor_good_tasks',
    help: 'Tasks that ended in the window, succeeded and met the SLO.',
    read: (g) => g.goodTasks,
  },
  {
    name: 'governor_replicas',
    help: 'Replicas: time-weighted mean over the part of the window the pool reported.',
    read: (g) => g.replicas,
  },
  {
    name: 'governor_generated_tokens_per_second',
    help: 'Output tokens per second over the window.',
    read: (g) => g.tokensPerS,
  },
  {
    name: 'governor_queue_depth',
    help: 'Mean requests waiting (vllm:num_requests_waiting, else governor.queue.depth).',
    read: (g) => g.queueDepth,
  },
];

const SUMMARIES: readonly {
  name: string;
  help: string;
  read: (g: SignalGroupDetail) => SignalGroupDetail['ttftMs'];
}[] = [
  {
    name: 'governor_ttft_seconds',
    help: 'User-perceived time to first token: root span start to first output token.',
    read: (g) => g.ttftMs,
  },
  {
    name: 'governor_server_ttft_seconds',
    help: 'Time to first token measured inside the runtime.',
    read: (g) => g.serverTtftMs,
  },
  {
    name: 'governor_e2e_latency_seconds',
    help: 'End-to-end latency per request (root span duration).',
    read: (g) => g.e2eMs,
  },
  {
    name: 'governor_task_e2e_latency_seconds',
    help: 'End-to-end latency per task: first request start to last request end.',
    read: (g) => g.taskE2eMs,
  },
  {
    name: 'governor_queue_time_seconds',
    help: 'Time waiting in the scheduler queue per request.',
    read: (g) => g.queueMs,
  },
];

/** Adds the families of a by-pool snapshot and a fleet snapshot (same window) to `text`. */
export function renderSignalsMetrics(
  text: PrometheusText,
  snapshots: {
    byPool: SignalsSnapshotDetail;
    fleet: SignalsSnapshotDetail;
    windowSeconds: number;
    atSeconds: number;
  },
): void {
  const groups: { labels: { pool?: string }; group: SignalGroupDetail }[] = [
    ...snapshots.fleet.groups.map((group) => ({ labels: {}, group })),
    // Requests without a pool are part of the fleet series only.
    ...snapshots.byPool.groups
      .filter((group) => group.key.pool !== null && group.key.pool !== undefined)
      .map((group) => ({ labels: { pool: String(group.key.pool) }, group })),
  ];
  text
    .family('governor_signals_window_seconds', 'gauge', 'Length of the window the governor_* signals cover.')
    .sample({}, snapshots.windowSeconds);
  text
    .family(
      'governor_signals_at_timestamp_seconds',
      'gauge',
      'Event time the window ends at (the watermark), Unix seconds.',
    )
    .sample({}, snapshots.atSeconds);
  for (const gauge of GAUGES) {
    const family = text.family(gauge.name, 'gauge', gauge.help);
    for (const { labels, group } of groups) family.sample(labels, gauge.read(group));
  }
  for (const summary of SUMMARIES) {
    const family = text.family(summary.name, 'summary', summary.help);
    for (const { labels, group } of groups) {
      const p = summary.read(group);
      family.sample({ ...labels, quantile: '0.5' }, scale(p.p50));
      family.sample({ ...labels, quantile: '0.95' }, scale(p.p95));
      family.sample({ ...labels, quantile: '0.99' }, scale(p.p99));
    }
  }
  const hopLatency = text.family(
    'governor_hop_latency_seconds',
    'summary',
    'Time spent in each hop per request.',
  );
  const shareE2e = text.family(
    'governor_hop_share_of_e2e_ratio',
    'gauge',
    "Mean share of a request's end-to-end latency spent in the hop.",
  );
  const shareTtft = text.family(
    'governor_hop_share_of_ttft_ratio',
    'gauge',
    "Mean share of a request's TTFT spent in the hop.",
  );
  for (const { labels, group } of groups) {
    for (const hop of HOP_KEYS) {
      const h = group.hops[hop];
      if (!h) continue;
      hopLatency.sample({ ...labels, hop, quantile: '0.5' }, scale(h.p50));
      hopLatency.sample({ ...labels, hop, quantile: '0.95' }, scale(h.p95));
      shareE2e.sample({ ...labels, hop }, h.shareOfE2e ?? null);
      shareTtft.sample({ ...labels, hop }, h.shareOfTtft ?? null);
    }
  }
}

function scale(ms: number | null): number | null {
  return ms === null ? null : ms * MS;
}
