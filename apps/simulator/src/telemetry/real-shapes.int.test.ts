import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOtlpReceiver } from '../../test/start-otlp-receiver.ts';
import type { OtlpReceiver, ReceivedPoint, ReceivedSpan } from '../../test/start-otlp-receiver.ts';
import { REQUEST_LATENCY_BOUNDS_S, TTFT_BOUNDS_S } from '../fleet/replica-engine.ts';
import { runSimulation } from '../run-simulation.ts';
import type { RunSummary } from '../summary/run-summary.ts';

// The default telemetry is what a Kubernetes fleet sends through an OpenTelemetry Collector
// (k8sattributes + prometheus receiver): no governor.* on runtime telemetry, standard names only.

const ROOT = 'POST /v1/chat/completions';
const POD_NAME = /^[a-z0-9-]+-[bcdfghjklmnpqrstvwxz2456789]{10}-[bcdfghjklmnpqrstvwxz2456789]{5}$/;
const POOLS = ['llama8b-h100-east', 'llama8b-a100-west', 'llama70b-h100-east'];
const SCRAPE_NS = 15_000_000_000n;

const groupBy = <T>(items: T[], key: (item: T) => string): Map<string, T[]> => {
  const out = new Map<string, T[]>();
  for (const item of items) out.set(key(item), [...(out.get(key(item)) ?? []), item]);
  return out;
};

describe('default telemetry: the shapes a Kubernetes fleet sends', () => {
  let receiver: OtlpReceiver;
  let summary: RunSummary;
  let spans: ReceivedSpan[];
  let points: ReceivedPoint[];

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    // Spot preemptions on one pool: replicas die and cold replacements start, serve, and are scraped.
    summary = await runSimulation({
      workload: 'azure-conv',
      scenario: 'preemption',
      faultTarget: 'llama8b-h100-east',
      durationMs: 20 * 60_000,
      drainMs: 60_000,
      target: receiver.url,
      seed: 3,
    });
    spans = receiver.spans;
    points = receiver.points;
  });
  afterAll(() => receiver.close());

  it('delivers every span and point, nothing dropped', () => {
    const t = summary.telemetry!;
    expect(t.spansFailed).toBe(0);
    expect(receiver.spans.length).toBe(t.spansEmitted);
    expect(receiver.points.length).toBe(t.metricPointsEmitted);
    expect(t.metricPointsFailed).toBe(0);
    expect(receiver.requests.rejected).toBe(0);
  });

  it('carries no governor.* attribute except the gateway tags copied from request headers', () => {
    for (const s of spans) {
      const governor = Object.keys(s.attributes).filter((k) => k.startsWith('governor.'));
      if (s.name === ROOT) expect(governor.sort()).toEqual(['governor.priority', 'governor.tenant']);
      else expect(governor).toEqual([]);
      expect(Object.keys(s.resource).filter((k) => k.startsWith('governor.'))).toEqual([]);
    }
    for (const p of points) {
      expect(Object.keys(p.attributes).filter((k) => k.startsWith('governor.'))).toEqual([]);
      expect(p.metric.startsWith('governor.')).toBe(false);
    }
  });

  it('has one HTTP-semconv gateway root per request, its status and outcome as the gateway saw them', () => {
    const roots = spans.filter((s) => s.name === ROOT);
    expect(roots.length).toBe(summary.requests);
    for (const root of roots) {
      expect(root.kind).toBe(2); // SERVER
      expect(root.parentSpanId).toBe('');
      expect(root.resource['service.name']).toBe('inference-gateway');
      expect(root.resource['k8s.deployment.name']).toBe('inference-gateway');
      expect(String(root.resource['k8s.pod.name'])).toMatch(POD_NAME);
      expect(root.attributes['http.request.method']).toBe('POST');
      expect(root.attributes['http.route']).toBe('/v1/chat/completions');
      expect(root.attributeTypes['http.response.status_code']).toBe('int');
      expect(typeof root.attributes['gen_ai.conversation.id']).toBe('string');
      const status = Number(root.attributes['http.response.status_code']);
      // Server spans: ERROR on 5xx only; 4xx leave the status unset.
      expect(root.statusCode).toBe(status >= 500 ? 2 : 0);
      expect(root.attributes['error.type'] !== undefined).toBe(status >= 500);
    }
    const ok = roots.filter((r) => r.attributes['http.response.status_code'] === 200).length;
    expect(ok).toBe(summary.successes);
    // The OpenAI SDK's retry counter on every request, as the gateway captured the header: a string
    // array of the retries taken, one root per retry the clients made.
    const header = 'http.request.header.x-stainless-retry-count';
    for (const root of roots) expect(root.attributeTypes[header]).toBe('array');
    const retriesTaken = roots.map((r) => JSON.parse(String(r.attributes[header])) as unknown);
    for (const v of retriesTaken) expect(v).toEqual([expect.stringMatching(/^\d+$/)]);
    const retried = retriesTaken.filter((v) => Number((v as string[])[0]) > 0).length;
    expect(retried).toBe(summary.retries);
    expect(retried).toBeGreaterThan(0);
    expect(roots.some((r) => Number(r.attributes['http.response.status_code']) >= 500)).toBe(true);
  });

  it('has a GenAI CLIENT span to the chosen pod under each routed root', () => {
    const byTrace = groupBy(spans, (s) => s.traceId);
    const podIps = new Set(
      spans.filter((s) => s.name === 'llm_request').map((s) => String(s.resource['k8s.pod.ip'])),
    );
    let clients = 0;
    for (const trace of byTrace.values()) {
      const root = trace.find((s) => s.name === ROOT)!;
      const client = trace.find((s) => s.kind === 3);
      if (!client) continue;
      clients += 1;
      expect(client.parentSpanId).toBe(root.spanId);
      expect(client.name).toMatch(/^chat llama-3\.1-(8|70)b-instruct$/);
      expect(client.attributes['gen_ai.operation.name']).toBe('chat');
      expect(client.attributeTypes['server.port']).toBe('int');
      expect(String(client.attributes['server.address'])).toMatch(/^10\.\d+\.\d+\.\d+$/);
      expect(client.startNs).toBeGreaterThanOrEqual(root.startNs);
      expect(client.endNs).toBeLessThanOrEqual(root.endNs);
      // The deadline Envoy's router sets on the upstream request, in ms, as the gateway captured it;
      // a request timed out (504) lasted it.
      const deadline = 'http.request.header.x-envoy-expected-rq-timeout-ms';
      expect(client.attributeTypes[deadline]).toBe('array');
      const [deadlineMs] = JSON.parse(String(client.attributes[deadline])) as string[];
      expect(deadlineMs).toMatch(/^\d+$/);
      if (root.attributes['http.response.status_code'] === 504)
        expect(Number(root.endNs - root.startNs) / 1e6).toBeGreaterThanOrEqual(Number(deadlineMs) - 1);
      if (root.attributes['http.response.status_code'] === 200) {
        expect(client.statusCode).toBe(0);
        expect(client.attributeTypes['gen_ai.response.finish_reasons']).toBe('array');
        expect(JSON.parse(String(client.attributes['gen_ai.response.finish_reasons']))).toEqual(['stop']);
        expect(client.attributeTypes['gen_ai.usage.input_tokens']).toBe('int');
        const chunkS = Number(client.attributes['gen_ai.response.time_to_first_chunk']);
        expect(chunkS).toBeGreaterThan(0);
        expect(chunkS * 1e9).toBeLessThan(Number(client.endNs - client.startNs));
      } else {
        expect(client.statusCode).toBe(2);
        expect(typeof client.attributes['error.type']).toBe('string');
      }
    }
    expect(clients).toBeGreaterThan(1000);
    // Every pod a runtime span came from is an address the gateway connected to.
    const addresses = new Set(
      spans.filter((s) => s.kind === 3).map((s) => String(s.attributes['server.address'])),
    );
    for (const ip of podIps) expect(addresses.has(ip)).toBe(true);
  });

  it('has one vLLM V1 llm_request per engine-finished request: child of the client span, float seconds, no children', () => {
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const parents = new Set(spans.map((s) => s.parentSpanId));
    const llm = spans.filter((s) => s.name === 'llm_request');
    expect(llm.length).toBeGreaterThan(1000);
    const floats = [
      'gen_ai.latency.time_in_queue',
      'gen_ai.latency.e2e',
      'gen_ai.latency.time_in_model_prefill',
      'gen_ai.latency.time_in_model_decode',
      'gen_ai.latency.time_in_model_inference',
      'gen_ai.request.temperature',
      'gen_ai.request.top_p',
    ];
    for (const s of llm) {
      expect(s.kind).toBe(2);
      expect(s.statusCode).toBe(0);
      expect(byId.get(s.parentSpanId)?.kind).toBe(3);
      expect(parents.has(s.spanId)).toBe(false);
      expect(s.resource['service.name']).toBe('vllm');
      expect(POOLS).toContain(s.resource['k8s.deployment.name']);
      expect(String(s.resource['k8s.pod.name'])).toMatch(POD_NAME);
      expect(String(s.resource['k8s.pod.name']).startsWith(`${s.resource['k8s.deployment.name']}-`)).toBe(
        true,
      );
      expect(typeof s.resource['k8s.node.name']).toBe('string');
      for (const name of floats) expect(['double', 'int']).toContain(s.attributeTypes[name]);
      expect(s.attributeTypes['gen_ai.request.id']).toBe('string');
      expect(s.attributeTypes['gen_ai.usage.prompt_tokens']).toBe('int');
      expect(s.attributeTypes['gen_ai.usage.completion_tokens']).toBe('int');
      for (const absent of ['gen_ai.response.finish_reasons', 'gen_ai.request.model', 'error.type'])
        expect(s.attributes[absent]).toBeUndefined();
      const e2eS = Number(s.attributes['gen_ai.latency.e2e']);
      expect(e2eS * 1e9).toBeCloseTo(Number(s.endNs - s.startNs), -4);
    }
    // A successful request: TTFT = queue + prefill, e2e ≥ TTFT.
    const served = llm.filter((s) => Number(s.attributes['gen_ai.usage.completion_tokens']) > 1);
    for (const s of served.slice(0, 500)) {
      const ttft = Number(s.attributes['gen_ai.latency.time_to_first_token']);
      const queue = Number(s.attributes['gen_ai.latency.time_in_queue']);
      const prefill = Number(s.attributes['gen_ai.latency.time_in_model_prefill']);
      expect(ttft).toBeCloseTo(queue + prefill, 4);
      expect(Number(s.attributes['gen_ai.latency.e2e'])).toBeGreaterThanOrEqual(ttft);
    }
    // Pod names stay the same for a replica across its spans; each pod belongs to one deployment.
    const deploymentOfPod = new Map<string, string>();
    for (const s of llm) {
      const pod = String(s.resource['k8s.pod.name']);
      const deployment = String(s.resource['k8s.deployment.name']);
      expect(deploymentOfPod.get(pod) ?? deployment).toBe(deployment);
      deploymentOfPod.set(pod, deployment);
    }
  });

  it('scrapes every target on its own stable phase every 15 s, targets staggered', () => {
    const ups = points.filter((p) => p.metric === 'up');
    const byTarget = groupBy(ups, (p) => String(p.resource['service.instance.id']));
    expect(byTarget.size).toBeGreaterThan(8);
    const phases = new Set<bigint>();
    for (const series of byTarget.values()) {
      const times = series.map((p) => p.timeNs);
      for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBe(SCRAPE_NS);
      phases.add(times[0]! % SCRAPE_NS);
    }
    expect(phases.size).toBeGreaterThan(byTarget.size / 2);
    // All points of one scrape share its instant.
    for (const p of points) {
      const target = byTarget.get(String(p.resource['service.instance.id']))!;
      expect(target.some((u) => u.timeNs === p.timeNs)).toBe(true);
    }
  });

  it('gives vLLM targets the prometheus receiver resource and the pod k8s.* attributes', () => {
    const vllm = points.filter((p) => p.resource['service.name'] === 'vllm');
    expect(vllm.length).toBeGreaterThan(0);
    for (const p of vllm) {
      const r = p.resource;
      expect(r['service.instance.id']).toBe(`${r['server.address']}:8000`);
      expect(r['server.port']).toBe('8000');
      expect(r['url.scheme']).toBe('http');
      expect(POOLS).toContain(r['k8s.deployment.name']);
      expect(String(r['k8s.pod.name'])).toMatch(POD_NAME);
      expect(r['k8s.replicaset.name']).toBe(String(r['k8s.pod.name']).slice(0, -6));
      if (p.metric !== 'up' && !p.metric.startsWith('scrape_')) {
        expect(p.metric.startsWith('vllm:')).toBe(true);
        expect(p.attributes.model_name).toMatch(/^llama-3\.1-(8|70)b-instruct$/);
        expect(p.attributes.engine).toBe('0');
      }
      expect(p.valueType).toBe('double');
    }
    const names = new Set(vllm.map((p) => p.metric));
    for (const name of [
      'vllm:num_requests_running',
      'vllm:num_requests_waiting',
      'vllm:kv_cache_usage_perc',
      'vllm:prompt_tokens_total',
      'vllm:generation_tokens_total',
      'vllm:request_success_total',
      'vllm:prefix_cache_queries_total',
      'vllm:prefix_cache_hits_total',
      'vllm:num_preemptions_total',
      'vllm:time_to_first_token_seconds',
      'vllm:e2e_request_latency_seconds',
      'vllm:request_queue_time_seconds',
      'vllm:iteration_tokens_total',
    ])
      expect(names.has(name)).toBe(true);
    expect([...names].some((n) => n.startsWith('governor.'))).toBe(false);
  });

  it('sends counters and histograms cumulative from the process start, monotonic per pod', () => {
    const cumulative = points.filter(
      (p) => p.resource['service.name'] === 'vllm' && (p.kind === 'sum' || p.kind === 'histogram'),
    );
    const series = groupBy(
      cumulative,
      (p) => `${p.resource['k8s.pod.name']}|${p.metric}|${p.attributes.finished_reason ?? ''}`,
    );
    for (const list of series.values()) {
      const start = list[0]!.startNs;
      for (let i = 0; i < list.length; i++) {
        const p = list[i]!;
        expect(p.temporality).toBe(2); // CUMULATIVE
        if (p.kind === 'sum') expect(p.isMonotonic).toBe(true);
        expect(p.startNs).toBe(start);
        expect(p.startNs).toBeLessThanOrEqual(p.timeNs);
        if (i > 0) expect(p.value).toBeGreaterThanOrEqual(list[i - 1]!.value);
      }
    }
    const ttft = cumulative.filter((p) => p.metric === 'vllm:time_to_first_token_seconds');
    expect(ttft[0]!.bounds).toEqual(TTFT_BOUNDS_S);
    const e2e = cumulative.find((p) => p.metric === 'vllm:e2e_request_latency_seconds')!;
    expect(e2e.bounds).toEqual(REQUEST_LATENCY_BOUNDS_S);
    for (const p of cumulative.filter((q) => q.kind === 'histogram')) {
      expect(p.bucketCounts!.length).toBe(p.bounds!.length + 1);
      expect(p.bucketCounts!.reduce((a, b) => a + b, 0)).toBe(p.value);
    }
    // The runtime's counters agree with the traces: stop finishes ≈ successful llm_request spans.
    const lastStop = [
      ...groupBy(
        cumulative.filter(
          (p) => p.metric === 'vllm:request_success_total' && p.attributes.finished_reason === 'stop',
        ),
        (p) => String(p.resource['k8s.pod.name']),
      ).values(),
    ].reduce((sum, list) => sum + list[list.length - 1]!.value, 0);
    expect(lastStop).toBeGreaterThan(0.95 * summary.successes);
    expect(lastStop).toBeLessThanOrEqual(summary.successes);
  });

  it('reports a replacement pod as up 0 while it starts, then 1, its counters starting from 0 at its process start', () => {
    const ups = groupBy(
      points.filter((p) => p.metric === 'up' && p.resource['service.name'] === 'vllm'),
      (p) => String(p.resource['k8s.pod.name']),
    );
    const started = [...ups.entries()].filter(([, list]) => list[0]!.value === 0);
    expect(started.length).toBeGreaterThan(0);
    let servedAfterStart = 0;
    for (const [pod, list] of started) {
      const firstUp = list.findIndex((p) => p.value === 1);
      // 0 until the server is up, then 1 for good (a pod never goes back to starting).
      for (let i = 0; i < list.length; i++) expect(list[i]!.value).toBe(firstUp >= 0 && i >= firstUp ? 1 : 0);
      const others = points.filter((p) => p.resource['k8s.pod.name'] === pod && p.metric.startsWith('vllm:'));
      // While down only `up` and scrape_* arrive.
      if (firstUp < 0) {
        expect(others).toEqual([]);
        continue;
      }
      expect(others.every((p) => p.timeNs >= list[firstUp]!.timeNs)).toBe(true);
      const prompt = others.filter((p) => p.metric === 'vllm:prompt_tokens_total');
      expect(prompt[0]!.startNs).toBeLessThan(list[0]!.timeNs + 1n);
      expect(prompt[0]!.startNs).toBeGreaterThan(list[0]!.timeNs - SCRAPE_NS - 1n);
      if (prompt[prompt.length - 1]!.value > 0) servedAfterStart += 1;
    }
    expect(servedAfterStart).toBeGreaterThan(0);
    // Preempted pods stop being scraped: their series end before the run does.
    let lastScrape = 0n;
    for (const p of points) if (p.timeNs > lastScrape) lastScrape = p.timeNs;
    const gone = [...ups.values()].filter((list) => list[list.length - 1]!.timeNs < lastScrape - SCRAPE_NS);
    expect(gone.length).toBeGreaterThan(0);
  });

  it('scrapes one DCGM exporter per node, each GPU labelled with its model and the workload pod', () => {
    const dcgm = points.filter((p) => p.resource['service.name'] === 'dcgm-exporter');
    const exporters = new Set(dcgm.map((p) => String(p.resource['k8s.pod.name'])));
    expect(exporters.size).toBeGreaterThanOrEqual(3);
    const util = dcgm.filter((p) => p.metric === 'DCGM_FI_DEV_GPU_UTIL');
    for (const p of dcgm) {
      expect(p.resource['service.instance.id']).toBe(`${p.resource['server.address']}:9400`);
      expect(p.resource['k8s.daemonset.name']).toBe('nvidia-dcgm-exporter');
    }
    for (const p of util) {
      expect(['NVIDIA H100 80GB HBM3', 'NVIDIA A100-SXM4-80GB']).toContain(p.attributes.modelName);
      expect(String(p.attributes.UUID)).toMatch(
        /^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
      );
      expect(p.attributes.Hostname).toBe(p.resource['k8s.node.name']);
      expect(p.value).toBeGreaterThanOrEqual(0);
      expect(p.value).toBeLessThanOrEqual(100);
    }
    for (const name of [
      'DCGM_FI_PROF_DRAM_ACTIVE',
      'DCGM_FI_PROF_GR_ENGINE_ACTIVE',
      'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE',
    ]) {
      const ratios = dcgm.filter((p) => p.metric === name);
      expect(ratios.length).toBe(util.length);
      for (const p of ratios) expect(p.value >= 0 && p.value <= 1).toBe(true);
    }
    // A GPU held by a serving vLLM pod names it, is busy at times and has vLLM's memory reserved.
    const vllmPods = new Set(
      points
        .filter((p) => p.resource['service.name'] === 'vllm')
        .map((p) => String(p.resource['k8s.pod.name'])),
    );
    const held = util.filter((p) => p.attributes.pod !== undefined);
    expect(held.every((p) => vllmPods.has(String(p.attributes.pod)))).toBe(true);
    expect(
      held.every((p) => p.attributes.namespace === 'inference' && p.attributes.container === 'vllm'),
    ).toBe(true);
    expect(held.some((p) => p.value > 10)).toBe(true);
    // The 70B pool's pods hold 4 GPUs each.
    const gpusPerPod = groupBy(
      held.filter((p) => String(p.attributes.pod).startsWith('llama70b-h100-east-')),
      (p) => `${p.attributes.pod}|${p.timeNs}`,
    );
    for (const list of gpusPerPod.values()) expect(list.length).toBe(4);
    const fb = dcgm.filter((p) => p.metric === 'DCGM_FI_DEV_FB_USED' && p.attributes.pod !== undefined);
    expect(fb.some((p) => p.value > 60_000)).toBe(true);
  });
});
