// Scrapes as the OpenTelemetry Collector's prometheus receiver forwards them: one resource per
// target (service.name = job, service.instance.id = instance, the pod's k8s.* from
// kubernetes_sd_configs, k8s.deployment.name from k8sattributes in the metrics pipeline); names kept
// as exposed (`_total` included); counters as cumulative monotonic sums whose start time is the
// series' `_created` (the process start); histograms as cumulative explicit-bucket histograms; the
// receiver's own `up` and `scrape_*` gauges on every target. All values are doubles, as Prometheus'.

import { ValueType } from '@opentelemetry/api';
import type { Attributes, HrTime } from '@opentelemetry/api';
import { AggregationTemporality, DataPointType } from '@opentelemetry/sdk-metrics';
import type { Histogram, MetricData } from '@opentelemetry/sdk-metrics';
import { hashUniform } from '../engine/random.ts';
import { toHrTime } from '../engine/sim-time.ts';
import { FINISH_REASONS, ITERATION_TOKEN_BOUNDS } from '../fleet/replica-engine.ts';
import type { HistogramCounts } from '../fleet/replica-engine.ts';
import type { GpuNodeScrape, RuntimeScrape, ScrapeSample } from '../sim/sim-types.ts';
import { DCGM_DAEMONSET, DCGM_PORT, VLLM_CONTAINER, VLLM_PORT, describeGpu } from './k8s-identity.ts';
import type { K8sIdentity, PodIdentity } from './k8s-identity.ts';

/** Job names of the scrape configs (→ service.name). */
export const VLLM_JOB = 'vllm';
export const DCGM_JOB = 'dcgm-exporter';
export const PROMETHEUS_RECEIVER_SCOPE =
  'github.com/open-telemetry/opentelemetry-collector-contrib/receiver/prometheusreceiver';

/** One target's scrapes, ready to be sent as one ResourceMetrics. */
export interface TargetMetrics {
  resource: Attributes;
  metrics: Map<string, MetricData>;
  points: number;
}

type Kind = 'gauge' | 'sum' | 'histogram';

export interface ScrapeMetricsBuilder {
  /** Adds one scrape; returns the number of points it produced. */
  add(scrape: ScrapeSample): number;
  /** Takes what was added since the last call, grouped by target. */
  take(): TargetMetrics[];
  readonly bufferedScrapes: number;
}

function podResource(
  pod: PodIdentity,
  job: string,
  port: number,
  controller: Attributes,
  startEpochMs: number,
  podStartMs: number,
): Attributes {
  return {
    'service.name': job,
    'service.instance.id': `${pod.ip}:${port}`,
    'server.address': pod.ip,
    'server.port': String(port),
    'url.scheme': 'http',
    'k8s.pod.name': pod.name,
    'k8s.pod.uid': pod.uid,
    'k8s.namespace.name': pod.namespace,
    'k8s.node.name': pod.nodeName,
    ...controller,
    'k8s.pod.start_time': new Date(startEpochMs + podStartMs).toISOString(),
  };
}

export function createScrapeMetricsBuilder(
  identity: K8sIdentity,
  startEpochMs: number,
): ScrapeMetricsBuilder {
  let targets = new Map<string, TargetMetrics>();
  let buffered = 0;
  /** When each DCGM exporter pod started (its node's first scrape). */
  const exporterStartMs = new Map<number, number>();

  const target = (key: string, resource: () => Attributes): TargetMetrics => {
    let t = targets.get(key);
    if (!t) {
      t = { resource: resource(), metrics: new Map(), points: 0 };
      targets.set(key, t);
    }
    return t;
  };

  const addPoint = <T extends number | Histogram>(
    t: TargetMetrics,
    kind: Kind,
    name: string,
    description: string,
    point: { attributes: Attributes; value: T; startTime: HrTime; endTime: HrTime },
  ) => {
    let metric = t.metrics.get(name);
    if (!metric) {
      const descriptor = { name, description, unit: '', valueType: ValueType.DOUBLE };
      metric =
        kind === 'gauge'
          ? {
              descriptor,
              aggregationTemporality: AggregationTemporality.CUMULATIVE,
              dataPointType: DataPointType.GAUGE,
              dataPoints: [],
            }
          : kind === 'sum'
            ? {
                descriptor,
                aggregationTemporality: AggregationTemporality.CUMULATIVE,
                dataPointType: DataPointType.SUM,
                isMonotonic: true,
                dataPoints: [],
              }
            : {
                descriptor,
                aggregationTemporality: AggregationTemporality.CUMULATIVE,
                dataPointType: DataPointType.HISTOGRAM,
                dataPoints: [],
              };
      t.metrics.set(name, metric);
    }
    (metric.dataPoints as Array<typeof point>).push(point);
    t.points += 1;
  };

  /** The receiver's own series: `up` and the scrape_* gauges. */
  const addScrapeSeries = (t: TargetMetrics, key: string, time: HrTime, up: boolean, samples: number) => {
    const gauge = (name: string, description: string, value: number) =>
      addPoint(t, 'gauge', name, description, { attributes: {}, value, startTime: time, endTime: time });
    gauge('up', 'The scraping was successful', up ? 1 : 0);
    const durationS = 0.002 + 0.018 * hashUniform(time[0], time[1], key.length);
    gauge('scrape_duration_seconds', 'Duration of the scrape', up ? durationS : 0.001);
    gauge('scrape_samples_scraped', 'The number of samples the target exposed', samples);
    gauge(
      'scrape_samples_post_metric_relabeling',
      'The number of samples remaining after metric relabeling was applied',
      samples,
    );
    gauge('scrape_series_added', 'The approximate number of new series in this scrape', 0);
    return 5;
  };

  const addRuntime = (s: RuntimeScrape): number => {
    const pod = identity.deploymentPod(s.pool, s.podIndex, identity.nodeName(s.nodeIndex, s.region));
    const key = `pod/${pod.name}`;
    const t = target(key, () =>
      podResource(
        pod,
        VLLM_JOB,
        VLLM_PORT,
        {
          'k8s.container.name': VLLM_CONTAINER,
          'k8s.replicaset.name': identity.replicaSetName(s.pool),
          'k8s.deployment.name': s.pool,
        },
        startEpochMs,
        s.processStartMs,
      ),
    );
    const before = t.points;
    const time = toHrTime(startEpochMs, s.timeMs);
    const start = toHrTime(startEpochMs, s.processStartMs);
    if (s.status === 'starting') {
      addScrapeSeries(t, key, time, false, 0);
      return t.points - before;
    }
    const labels = { model_name: s.model, engine: '0' };
    const gauge = (name: string, description: string, value: number) =>
      addPoint(t, 'gauge', name, description, { attributes: labels, value, startTime: time, endTime: time });
    const counter = (name: string, description: string, value: number, extra: Attributes = {}) =>
      addPoint(t, 'sum', name, description, {
        attributes: { ...labels, ...extra },
        value,
        startTime: start,
        endTime: time,
      });
    const histogram = (name: string, description: string, h: HistogramCounts) =>
      addPoint(t, 'histogram', name, description, {
        attributes: labels,
        value: { buckets: { boundaries: [...h.bounds], counts: [...h.counts] }, sum: h.sum, count: h.count },
        startTime: start,
        endTime: time,
      });
    const c = s.counters;
    const r = c.requests;
    gauge('vllm:num_requests_running', 'Number of requests in model execution batches.', s.running);
    gauge('vllm:num_requests_waiting', 'Number of requests waiting to be processed.', s.waiting);
    gauge('vllm:kv_cache_usage_perc', 'KV-cache usage. 1 means 100 percent usage.', s.kvUsage);
    counter('vllm:prompt_tokens_total', 'Number of prefill tokens processed.', c.promptTokens);
    counter('vllm:generation_tokens_total', 'Number of generation tokens processed.', c.generationTokens);
    counter('vllm:num_preemptions_total', 'Cumulative number of preemption from the engine.', r.preemptions);
    counter(
      'vllm:prefix_cache_queries_total',
      'Prefix cache queries, in terms of number of queried tokens.',
      r.prefixQueries,
    );
    counter(
      'vllm:prefix_cache_hits_total',
      'Prefix cache hits, in terms of number of cached tokens.',
      r.prefixHits,
    );
    for (const reason of FINISH_REASONS) {
      counter('vllm:request_success_total', 'Count of successfully processed requests.', r.finished[reason], {
        finished_reason: reason,
      });
    }
    histogram('vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', r.ttftS);
    histogram('vllm:e2e_request_latency_seconds', 'Histogram of e2e request latency in seconds.', r.e2eS);
    histogram(
      'vllm:request_queue_time_seconds',
      'Histogram of time spent in WAITING phase for request.',
      r.queueS,
    );
    histogram('vllm:iteration_tokens_total', 'Histogram of number of tokens per engine_step.', {
      bounds: ITERATION_TOKEN_BOUNDS,
      counts: c.iterationBuckets,
      sum: c.iterationTokens,
      count: c.iterations,
    });
    // Exposed samples: 3 gauges, 9 counters (+ _created each), 4 histograms (buckets, +Inf, sum, count, created).
    const histogramSamples = [r.ttftS, r.e2eS, r.queueS].reduce((n, h) => n + h.bounds.length + 4, 0);
    const samples = 3 + 9 * 2 + histogramSamples + ITERATION_TOKEN_BOUNDS.length + 4;
    addScrapeSeries(t, key, time, true, samples);
    return t.points - before;
  };

  const addGpuNode = (s: GpuNodeScrape): number => {
    const nodeName = identity.nodeName(s.nodeIndex, s.region);
    const exporter = identity.exporterPod(s.nodeIndex, nodeName);
    if (!exporterStartMs.has(s.nodeIndex)) exporterStartMs.set(s.nodeIndex, Math.min(0, s.timeMs));
    const key = `pod/${exporter.name}`;
    const t = target(key, () =>
      podResource(
        exporter,
        DCGM_JOB,
        DCGM_PORT,
        { 'k8s.container.name': DCGM_DAEMONSET, 'k8s.daemonset.name': DCGM_DAEMONSET },
        startEpochMs,
        exporterStartMs.get(s.nodeIndex)!,
      ),
    );
    const before = t.points;
    const time = toHrTime(startEpochMs, s.timeMs);
    const gpu = describeGpu(s.gpuType);
    for (const g of s.gpus) {
      const attributes: Attributes = {
        gpu: String(g.gpu),
        UUID: identity.gpuUuid(s.nodeIndex, g.gpu),
        pci_bus_id: `00000000:${(0x18 + g.gpu * 0x10).toString(16).toUpperCase().padStart(2, '0')}:00.0`,
        device: `nvidia${g.gpu}`,
        modelName: gpu.modelName,
        Hostname: nodeName,
      };
      if (g.holder) {
        const pod = identity.deploymentPod(g.holder.pool, g.holder.podIndex, nodeName);
        attributes.pod = pod.name;
        attributes.namespace = pod.namespace;
        attributes.container = VLLM_CONTAINER;
        attributes.pod_uid = pod.uid;
      }
      const busy = g.utilPct / 100;
      // While busy, prefill keeps the SMs and tensor cores loaded; decode mostly streams weights and KV.
      const grActive = busy * (0.75 + 0.2 * g.prefillShare);
      const tensorActive = busy * (0.15 + 0.55 * g.prefillShare);
      const dramActive = busy * (0.75 - 0.45 * g.prefillShare);
      const usedMiB = Math.round(gpu.memoryMiB * g.memoryUsedShare);
      const gauge = (name: string, description: string, value: number) =>
        addPoint(t, 'gauge', name, description, { attributes, value, startTime: time, endTime: time });
      gauge('DCGM_FI_DEV_GPU_UTIL', 'GPU utilization (in %).', Math.round(g.utilPct));
      gauge('DCGM_FI_DEV_FB_USED', 'Framebuffer memory used (in MiB).', usedMiB);
      gauge('DCGM_FI_DEV_FB_FREE', 'Framebuffer memory free (in MiB).', gpu.memoryMiB - usedMiB);
      gauge('DCGM_FI_PROF_GR_ENGINE_ACTIVE', 'Ratio of time the graphics engine is active.', grActive);
      gauge(
        'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE',
        'Ratio of cycles the tensor (HMMA) pipe is active.',
        tensorActive,
      );
      gauge('DCGM_FI_PROF_DRAM_ACTIVE', 'Ratio of cycles the device memory interface is active.', dramActive);
    }
    addScrapeSeries(t, key, time, true, s.gpus.length * 6);
    return t.points - before;
  };

  return {
    add(scrape) {
      buffered += 1;
      return scrape.kind === 'runtime' ? addRuntime(scrape) : addGpuNode(scrape);
    },
    take() {
      const out = [...targets.values()];
      targets = new Map();
      buffered = 0;
      return out;
    },
    get bufferedScrapes() {
      return buffered;
    },
  };
}
