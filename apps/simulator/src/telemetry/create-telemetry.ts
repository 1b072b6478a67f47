import { Metric } from '@governor/conventions';
import { ValueType } from '@opentelemetry/api';
import type { Attributes, HrTime, Tracer } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import type { ExportResult } from '@opentelemetry/core';
import { OTLPMetricExporter as OTLPMetricExporterJson } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as OTLPMetricExporterProto } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter as OTLPTraceExporterJson } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OTLPTraceExporterProto } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AggregationTemporality, DataPointType } from '@opentelemetry/sdk-metrics';
import type {
  GaugeMetricData,
  Histogram,
  HistogramMetricData,
  MetricData,
  ResourceMetrics,
  SumMetricData,
} from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { toHrTime } from '../engine/sim-time.ts';
import { ITERATION_TOKEN_BOUNDS } from '../fleet/replica-engine.ts';
import type { Attempt, MetricsSample, ScrapeSample, TelemetrySink } from '../sim/sim-types.ts';
import type { Replica } from '../fleet/replica-engine.ts';
import { PROMETHEUS_RECEIVER_SCOPE, createScrapeMetricsBuilder } from './build-scrape-metrics.ts';
import { createDeterministicIdGenerator } from './deterministic-id-generator.ts';
import { emitAttemptSpans } from './emit-attempt-spans.ts';
import { emitRealAttemptSpans } from './emit-real-attempt-spans.ts';
import { GATEWAY_DEPLOYMENT, createK8sIdentity } from './k8s-identity.ts';

export type OtlpProtocol = 'http/json' | 'http/protobuf';
export const OTLP_PROTOCOLS: readonly OtlpProtocol[] = ['http/json', 'http/protobuf'];

export interface TelemetryOptions {
  /** Base URL such as http://127.0.0.1:4318; /v1/traces and /v1/metrics are appended. */
  target: string;
  protocol: OtlpProtocol;
  seed: number;
  startEpochMs: number;
  /** Spans ended but not yet acknowledged before the run waits for the exporter. */
  maxPendingSpans?: number;
  /** Gauge samples (or target scrapes, in real shapes) buffered before they are sent. */
  metricSamplesPerExport?: number;
  /**
   * 'real' (default): what a Kubernetes fleet sends through an OpenTelemetry Collector — HTTP and
   * GenAI semconv gateway spans, vLLM V1 `llm_request` spans and scraped metrics on per-pod
   * resources with k8s.* attributes, no governor.* on runtime telemetry. 'governor': the
   * simulator's earlier shapes, with governor.* attributes on every span and fleet-wide gauges.
   */
  shapes?: TelemetryShapes;
}

export type TelemetryShapes = 'real' | 'governor';

export interface TelemetryStats {
  spansEmitted: number;
  spansExported: number;
  spansFailed: number;
  metricPointsEmitted: number;
  metricPointsExported: number;
  metricPointsFailed: number;
  lastExportError: string | null;
}

export interface Telemetry extends TelemetrySink {
  readonly stats: TelemetryStats;
  /** True when enough spans are unacknowledged that the run should wait for the exporter. */
  needsFlush(): boolean;
  /** Starts exporting everything queued and waits until half the backlog is acknowledged. */
  relievePressure(): Promise<void>;
  /** Sends everything pending (spans and gauges) and waits for the receiver's answers. */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

const MAX_EXPORT_BATCH = 2048;
const EXPORT_TIMEOUT_MS = 30_000;

/** Wraps the OTLP exporter to count acknowledged spans and to await exports already in flight. */
function createCountingExporter(inner: SpanExporter, stats: TelemetryStats) {
  const inFlight = new Set<Promise<void>>();
  const exporter: SpanExporter = {
    export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void) {
      let settle: () => void = () => {};
      const done = new Promise<void>((resolve) => {
        settle = resolve;
      });
      inFlight.add(done);
      inner.export(spans, (result) => {
        if (result.code === ExportResultCode.SUCCESS) stats.spansExported += spans.length;
        else {
          stats.spansFailed += spans.length;
          stats.lastExportError = result.error?.message ?? 'span export failed';
        }
        inFlight.delete(done);
        settle();
        resultCallback(result);
      });
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
  return {
    exporter,
    waitIdle: async () => void (await Promise.all([...inFlight])),
    /** Resolves when any export in flight settles (at once when none is). */
    waitAny: async () =>
      void (await Promise.race([...inFlight, ...(inFlight.size === 0 ? [Promise.resolve()] : [])])),
    get inFlightCount() {
      return inFlight.size;
    },
  };
}

export function createTelemetry(options: TelemetryOptions): Telemetry {
  const base = options.target.replace(/\/+$/, '');
  const proto = options.protocol === 'http/protobuf';
  const exporterConfig = { url: `${base}/v1/traces`, timeoutMillis: EXPORT_TIMEOUT_MS, concurrencyLimit: 64 };
  const traceExporter = proto
    ? new OTLPTraceExporterProto(exporterConfig)
    : new OTLPTraceExporterJson(exporterConfig);
  const metricConfig = { url: `${base}/v1/metrics`, timeoutMillis: EXPORT_TIMEOUT_MS };
  const metricExporter = proto
    ? new OTLPMetricExporterProto(metricConfig)
    : new OTLPMetricExporterJson(metricConfig);
  const stats: TelemetryStats = {
    spansEmitted: 0,
    spansExported: 0,
    spansFailed: 0,
    metricPointsEmitted: 0,
    metricPointsExported: 0,
    metricPointsFailed: 0,
    lastExportError: null,
  };
  const counting = createCountingExporter(traceExporter, stats);
  const maxPendingSpans = options.maxPendingSpans ?? 8 * MAX_EXPORT_BATCH;
  // The queue is never the limit: back-pressure (needsFlush) keeps it far below this size.
  const processor = new BatchSpanProcessor({
    exporter: counting.exporter,
    maxExportBatchSize: MAX_EXPORT_BATCH,
    maxQueueSize: 1 << 22,
    scheduledDelayMillis: 1000,
    exportTimeoutMillis: EXPORT_TIMEOUT_MS,
  });
  const ids = createDeterministicIdGenerator(options.seed);
  const createProvider = (serviceName: string) =>
    new TracerProvider({
      resource: resourceFromAttributes({ 'service.name': serviceName, 'service.namespace': 'governor-sim' }),
      idGenerator: ids,
      spanProcessors: [processor],
    });
  const real = (options.shapes ?? 'real') === 'real';
  const providers: TracerProvider[] = [];
  let emitSpans: (attempt: Attempt) => number;
  if (real) {
    const identity = createK8sIdentity(options.seed);
    const gatewayPod = identity.deploymentPod(GATEWAY_DEPLOYMENT, 0, identity.nodeName(-1, 'system'));
    const podProvider = (attributes: Record<string, string>) => {
      const provider = new TracerProvider({
        resource: resourceFromAttributes(attributes),
        idGenerator: ids,
        spanProcessors: [processor],
      });
      providers.push(provider);
      return provider;
    };
    const gateway = podProvider({
      'service.name': GATEWAY_DEPLOYMENT,
      'k8s.namespace.name': gatewayPod.namespace,
      'k8s.deployment.name': GATEWAY_DEPLOYMENT,
      'k8s.pod.name': gatewayPod.name,
      'k8s.pod.uid': gatewayPod.uid,
      'k8s.node.name': gatewayPod.nodeName,
    }).getTracer('envoy');
    const runtimeTracers = new Map<Replica, Tracer>();
    const podOf = (replica: Replica) =>
      identity.deploymentPod(
        replica.poolName,
        Number(replica.id.slice(replica.id.lastIndexOf('-') + 1)),
        identity.nodeName(replica.nodeIndex, replica.spec.region),
      );
    const tracers = {
      gateway,
      podIp: (replica: Replica) => podOf(replica).ip,
      runtime(replica: Replica): Tracer {
        let tracer = runtimeTracers.get(replica);
        if (!tracer) {
          const pod = podOf(replica);
          // The OTel Python SDK's resource (OTEL_SERVICE_NAME=vllm) plus what k8sattributes adds.
          tracer = podProvider({
            'service.name': 'vllm',
            'telemetry.sdk.language': 'python',
            'telemetry.sdk.name': 'opentelemetry',
            'telemetry.sdk.version': '1.33.1',
            'k8s.namespace.name': pod.namespace,
            'k8s.deployment.name': replica.poolName,
            'k8s.pod.name': pod.name,
            'k8s.pod.uid': pod.uid,
            'k8s.pod.ip': pod.ip,
            'k8s.node.name': pod.nodeName,
            'k8s.pod.start_time': new Date(options.startEpochMs + replica.createdMs).toISOString(),
          }).getTracer('vllm.llm_engine');
          runtimeTracers.set(replica, tracer);
        }
        return tracer;
      },
    };
    emitSpans = (attempt) => emitRealAttemptSpans(attempt, tracers, ids, options.startEpochMs);
  } else {
    providers.push(createProvider('gateway'), createProvider('router'), createProvider('vllm'));
    const tracers = {
      gateway: providers[0]!.getTracer('@governor/simulator'),
      router: providers[1]!.getTracer('@governor/simulator'),
      vllm: providers[2]!.getTracer('@governor/simulator'),
    };
    emitSpans = (attempt) => emitAttemptSpans(attempt, tracers, ids, options.startEpochMs);
  }
  const scrapes = createScrapeMetricsBuilder(createK8sIdentity(options.seed), options.startEpochMs);

  const pendingSpans = () => stats.spansEmitted - stats.spansExported - stats.spansFailed;
  const metricsResource = resourceFromAttributes({
    'service.name': 'vllm',
    'service.namespace': 'governor-sim',
  });
  let samples: MetricsSample[] = [];
  const samplesPerExport = options.metricSamplesPerExport ?? 30;
  let metricChain: Promise<void> = Promise.resolve();

  const buildResourceMetrics = (
    batch: MetricsSample[],
  ): { resourceMetrics: ResourceMetrics; points: number } => {
    type Point<T> = { attributes: Attributes; value: T; time: HrTime; startTime: HrTime };
    const gauges = new Map<string, Point<number>[]>();
    const sums = new Map<string, Point<number>[]>();
    const histograms = new Map<string, Point<Histogram>[]>();
    const add = <T>(series: Map<string, Point<T>[]>, name: string, point: Point<T>) => {
      const list = series.get(name) ?? [];
      list.push(point);
      series.set(name, list);
    };
    for (const sample of batch) {
      const time = toHrTime(options.startEpochMs, sample.timeMs);
      const gauge = (name: string, attributes: Attributes, value: number) =>
        add(gauges, name, { attributes, value, time, startTime: time });
      for (const p of sample.pools) gauge(Metric.poolReplicas, { 'governor.pool': p.pool }, p.paidReplicas);
      for (const r of sample.replicas) {
        const attributes = { 'governor.pool': r.pool, 'governor.replica': r.replica };
        gauge(Metric.dcgmGpuUtil, attributes, r.gpuUtilPct);
        if (r.status === 'starting') continue;
        gauge(Metric.vllmKvCacheUsage, attributes, r.kvUsage);
        gauge(Metric.vllmRequestsWaiting, attributes, r.waiting);
        gauge(Metric.vllmRequestsRunning, attributes, r.running);
        // Counters count from the replica's start, as a restarted vLLM process does.
        const startTime = toHrTime(options.startEpochMs, r.readyMs);
        const c = r.counters;
        add(sums, Metric.vllmPromptTokens, { attributes, value: c.promptTokens, time, startTime });
        add(sums, Metric.vllmGenerationTokens, { attributes, value: c.generationTokens, time, startTime });
        add(histograms, Metric.vllmIterationTokens, {
          attributes,
          value: {
            buckets: { boundaries: ITERATION_TOKEN_BOUNDS, counts: c.iterationBuckets },
            sum: c.iterationTokens,
            count: c.iterations,
          },
          time,
          startTime,
        });
      }
    }
    const descriptions: Record<string, [string, string, ValueType]> = {
      [Metric.poolReplicas]: [
        'Replicas paid for (running + starting + draining)',
        '{replica}',
        ValueType.INT,
      ],
      [Metric.vllmKvCacheUsage]: ['KV-cache usage (0–1)', '1', ValueType.DOUBLE],
      [Metric.vllmRequestsWaiting]: ['Requests waiting to be scheduled', '{request}', ValueType.INT],
      [Metric.vllmRequestsRunning]: ['Requests in the running batch', '{request}', ValueType.INT],
      [Metric.dcgmGpuUtil]: ['Share of time the GPU had a non-empty batch', '%', ValueType.DOUBLE],
      [Metric.vllmPromptTokens]: ['Prompt tokens prefilled', '{token}', ValueType.INT],
      [Metric.vllmGenerationTokens]: ['Tokens generated', '{token}', ValueType.INT],
      [Metric.vllmIterationTokens]: ['Tokens processed per engine step', '{token}', ValueType.INT],
    };
    const descriptor = (name: string) => {
      const [description, unit, valueType] = descriptions[name]!;
      return { name, description, unit, valueType };
    };
    const points = <T>(list: Point<T>[]) =>
      list.map((p) => ({
        startTime: p.startTime,
        endTime: p.time,
        attributes: p.attributes,
        value: p.value,
      }));
    const metrics: MetricData[] = [
      ...[...gauges.entries()].map(
        ([name, list]): GaugeMetricData => ({
          descriptor: descriptor(name),
          aggregationTemporality: AggregationTemporality.CUMULATIVE,
          dataPointType: DataPointType.GAUGE,
          dataPoints: points(list),
        }),
      ),
      ...[...sums.entries()].map(
        ([name, list]): SumMetricData => ({
          descriptor: descriptor(name),
          aggregationTemporality: AggregationTemporality.CUMULATIVE,
          dataPointType: DataPointType.SUM,
          isMonotonic: true,
          dataPoints: points(list),
        }),
      ),
      ...[...histograms.entries()].map(
        ([name, list]): HistogramMetricData => ({
          descriptor: descriptor(name),
          aggregationTemporality: AggregationTemporality.CUMULATIVE,
          dataPointType: DataPointType.HISTOGRAM,
          dataPoints: points(list),
        }),
      ),
    ];
    const count = metrics.reduce((n, m) => n + m.dataPoints.length, 0);
    return {
      resourceMetrics: {
        resource: metricsResource,
        scopeMetrics: [{ scope: { name: '@governor/simulator' }, metrics }],
      },
      points: count,
    };
  };

  const exportResourceMetrics = (resourceMetrics: ResourceMetrics, points: number): Promise<void> =>
    new Promise<void>((resolve) => {
      metricExporter.export(resourceMetrics, (result) => {
        if (result.code === ExportResultCode.SUCCESS) stats.metricPointsExported += points;
        else {
          stats.metricPointsFailed += points;
          stats.lastExportError = result.error?.message ?? 'metric export failed';
        }
        resolve();
      });
    });

  const exportMetrics = async (batch: MetricsSample[]): Promise<void> => {
    if (batch.length === 0) return;
    const { resourceMetrics, points } = buildResourceMetrics(batch);
    await exportResourceMetrics(resourceMetrics, points);
  };

  /** One request per scraped target, as the Collector's exporter groups by resource. */
  const exportScrapes = async (targets: ReturnType<typeof scrapes.take>): Promise<void> => {
    await Promise.all(
      targets.map((t) =>
        exportResourceMetrics(
          {
            resource: resourceFromAttributes(t.resource),
            scopeMetrics: [{ scope: { name: PROMETHEUS_RECEIVER_SCOPE }, metrics: [...t.metrics.values()] }],
          },
          t.points,
        ),
      ),
    );
  };

  const flushMetrics = (): Promise<void> => {
    const batch = samples;
    samples = [];
    const targets = scrapes.take();
    metricChain = metricChain.then(() => exportMetrics(batch)).then(() => exportScrapes(targets));
    return metricChain;
  };

  return {
    stats,
    onAttemptFinished(attempt: Attempt) {
      stats.spansEmitted += emitSpans(attempt);
    },
    onScrape(scrape: ScrapeSample) {
      stats.metricPointsEmitted += scrapes.add(scrape);
      if (scrapes.bufferedScrapes >= samplesPerExport * 4) void flushMetrics();
    },
    onMetricsSample(sample: MetricsSample) {
      samples.push(sample);
      // A starting replica reports its GPU utilization only; a serving one 4 gauges and 3 counters.
      for (const r of sample.replicas) stats.metricPointsEmitted += r.status === 'starting' ? 1 : 7;
      stats.metricPointsEmitted += sample.pools.length;
      if (samples.length >= samplesPerExport) void flushMetrics();
    },
    needsFlush() {
      return pendingSpans() > maxPendingSpans;
    },
    async relievePressure() {
      const flushing = processor.forceFlush().catch((error: unknown) => {
        stats.lastExportError = error instanceof Error ? error.message : String(error);
      });
      while (pendingSpans() > maxPendingSpans / 2 && counting.inFlightCount > 0) await counting.waitAny();
      if (pendingSpans() > maxPendingSpans / 2) await flushing;
    },
    async flush() {
      await processor.forceFlush().catch((error: unknown) => {
        stats.lastExportError = error instanceof Error ? error.message : String(error);
      });
      await counting.waitIdle();
      await flushMetrics();
    },
    async shutdown() {
      await this.flush();
      await Promise.all(providers.map((p) => p.shutdown().catch(() => undefined)));
      await metricExporter.shutdown().catch(() => undefined);
    },
  };
}
