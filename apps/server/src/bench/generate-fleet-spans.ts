import type { MetricPointRow, SpanRow } from '@governor/otlp';

// Synthetic fleet traffic for the signals benchmark, generated directly as store rows (the form
// the OTLP normalizer produces), so a 20M-span store builds in minutes. Each request is a trace of
// 6–7 spans — gateway root, router, optional prefix-cache lookup, vLLM runtime with scheduler,
// prefill and decode children — with tenants, priorities, multi-step agent workflows, retries and
// errors; each pool reports the replicas gauge and vLLM's KV-cache usage every 15 s.

export interface BenchPool {
  name: string;
  model: string;
  region: string;
  gpuType: string;
  gpusPerReplica: number;
  replicas: number;
  weight: number;
  /** Decode inter-token latency (ms) and prefill ms per 1k input tokens. */
  itlMs: number;
  prefillMsPer1k: number;
}

export const BENCH_POOLS: readonly BenchPool[] = [
  {
    name: 'llama8b-h100-east',
    model: 'llama-3.1-8b-instruct',
    region: 'us-east',
    gpuType: 'H100',
    gpusPerReplica: 1,
    replicas: 8,
    weight: 0.4,
    itlMs: 11,
    prefillMsPer1k: 35,
  },
  {
    name: 'llama8b-a100-west',
    model: 'llama-3.1-8b-instruct',
    region: 'us-west',
    gpuType: 'A100',
    gpusPerReplica: 1,
    replicas: 6,
    weight: 0.25,
    itlMs: 16,
    prefillMsPer1k: 55,
  },
  {
    name: 'llama70b-h100-east',
    model: 'llama-3.1-70b-instruct',
    region: 'us-east',
    gpuType: 'H100',
    gpusPerReplica: 4,
    replicas: 4,
    weight: 0.2,
    itlMs: 30,
    prefillMsPer1k: 120,
  },
  {
    name: 'qwen32b-l40s-eu',
    model: 'qwen2.5-32b-instruct',
    region: 'eu-west',
    gpuType: 'L40S',
    gpusPerReplica: 2,
    replicas: 4,
    weight: 0.15,
    itlMs: 24,
    prefillMsPer1k: 90,
  },
];

export const BENCH_PRICES: Readonly<Record<string, number>> = { H100: 4.0, A100: 2.5, L40S: 1.8 };

export interface FleetTrafficOptions {
  /** Event time of the first request, ns. */
  startNs: bigint;
  /** Requests per second of event time. */
  requestsPerS: number;
  seed: number;
}

export interface GeneratedChunk {
  spans: SpanRow[];
  metrics: MetricPointRow[];
  /** Event time reached (ns). */
  timeNs: bigint;
}

const GAUGE_INTERVAL_NS = 15_000_000_000n;
const TENANTS = Array.from({ length: 20 }, (_, i) => `tenant-${String(i + 1).padStart(2, '0')}`);
const WORKFLOW_TYPES = ['code-agent', 'rag-answer', 'support-triage'];

/** Generates traffic chunk by chunk, each with at least `spans` spans, in event-time order. */
export function createFleetTraffic(options: FleetTrafficOptions): { next(spans: number): GeneratedChunk } {
  let seed = options.seed >>> 0;
  const random = () => {
    // mulberry32: fast, deterministic
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const exp = (mean: number) => -Math.log(1 - random()) * mean;
  const cumulative: number[] = [];
  BENCH_POOLS.reduce((sum, p) => {
    cumulative.push(sum + p.weight);
    return sum + p.weight;
  }, 0);
  const resourceJson = new Map<string, string>();
  const resourceFor = (service: string, instance: string) => {
    const key = `${service}|${instance}`;
    let json = resourceJson.get(key);
    if (!json) {
      json = JSON.stringify({
        'service.name': service,
        'service.instance.id': instance,
        'telemetry.sdk.language': 'python',
      });
      resourceJson.set(key, json);
    }
    return json;
  };

  let requestIndex = 0;
  let spanCounter = 0;
  let nowNs = options.startNs;
  let nextGaugeNs = options.startNs;
  const intervalNs = BigInt(Math.round(1e9 / options.requestsPerS));
  /** Open workflows, a min-heap on the time their next step is due. */
  const workflows = createHeap<OpenWorkflow>((a, b) => a.dueNs < b.dueNs);

  // Ids carry the seed, so traffic generated with another seed never continues these traces.
  const idPrefix = (options.seed >>> 0).toString(16).padStart(8, '0');
  const spanId = () => idPrefix + (++spanCounter).toString(16).padStart(8, '0');

  const pushRequest = (
    out: SpanRow[],
    req: {
      startNs: bigint;
      pool: BenchPool;
      replica: string;
      tenant: string;
      priority: number;
      workflow: { id: string; type: string; step: number; steps: number } | null;
      attempt: number;
      failed: boolean;
    },
  ) => {
    const traceId = idPrefix + (++requestIndex).toString(16).padStart(24, '0');
    const inputTokens = 200 + Math.floor(exp(1800));
    const outputTokens = 20 + Math.floor(exp(250));
    const cacheLookup = random() < 0.5;
    const cacheHit = cacheLookup && random() < 0.6;
    const cachedTokens = cacheHit ? Math.floor(inputTokens * 0.7) : 0;
    const gatewayBeforeMs = 1 + random() * 2;
    const routerMs = 0.5 + random();
    const cacheMs = cacheLookup ? 0.3 + random() * 0.7 : 0;
    const queueMs = exp(25);
    const prefillMs =
      8 + ((inputTokens - cachedTokens) / 1000) * req.pool.prefillMsPer1k * (0.8 + random() * 0.4);
    const decodeMs = req.failed
      ? outputTokens * req.pool.itlMs * random()
      : outputTokens * req.pool.itlMs * (0.9 + random() * 0.2);
    const gatewayAfterMs = 0.5 + random();
    const ms = (v: number) => BigInt(Math.round(v * 1e6));
    const t0 = req.startNs;
    const routerStart = t0 + ms(gatewayBeforeMs);
    const cacheStart = routerStart + ms(routerMs);
    const runtimeStart = cacheStart + ms(cacheMs);
    const prefillStart = runtimeStart + ms(queueMs);
    const firstToken = prefillStart + ms(prefillMs);
    const runtimeEnd = firstToken + ms(decodeMs);
    const end = runtimeEnd + ms(gatewayAfterMs);
    const outcome = req.failed ? 'error' : 'success';
    const gatewayId = spanId();
    const runtimeId = spanId();
    const taskId = req.workflow?.id ?? traceId;
    // One object literal with every field in SPAN_COLUMNS order: spreading keeps V8 from giving the
    // rows one shape and costs several times more (and most of it in GC).
    const span = (
      f: {
        spanId: string;
        parentSpanId?: string | null;
        name: string;
        hop: string;
        startNs: bigint;
        endNs: bigint;
        isRoot?: boolean;
        statusCode?: number;
        outcome?: string;
        replica?: string | null;
        inputTokens?: number | null;
        outputTokens?: number | null;
        cachedTokens?: number | null;
        serverTtftMs?: number | null;
        firstTokenNs?: bigint | null;
        cacheHit?: boolean | null;
        attributes?: string;
        events?: string;
      },
      service: string,
      instance: string,
    ): SpanRow => ({
      traceId,
      spanId: f.spanId,
      parentSpanId: f.parentSpanId === undefined ? gatewayId : f.parentSpanId,
      name: f.name,
      kind: 2,
      service,
      hop: f.hop,
      startNs: f.startNs,
      endNs: f.endNs,
      durationMs: Number(f.endNs - f.startNs) / 1e6,
      statusCode: f.statusCode ?? 1,
      statusMessage: null,
      isRoot: f.isRoot ?? false,
      model: req.pool.model,
      pool: req.pool.name,
      region: req.pool.region,
      gpuType: req.pool.gpuType,
      replica: f.replica ?? null,
      tenant: req.tenant,
      priority: req.priority,
      taskId,
      workflowId: req.workflow?.id ?? null,
      workflowType: req.workflow?.type ?? null,
      workflowStep: req.workflow?.step ?? null,
      workflowSteps: req.workflow?.steps ?? null,
      conversationId: null,
      attempt: req.attempt,
      outcome: f.outcome ?? 'success',
      errorType: null,
      operation: 'chat',
      inputTokens: f.inputTokens ?? null,
      outputTokens: f.outputTokens ?? null,
      cachedTokens: f.cachedTokens ?? null,
      ttftMs: null,
      serverTtftMs: f.serverTtftMs ?? null,
      firstTokenNs: f.firstTokenNs ?? null,
      queueMs: null,
      prefillMs: null,
      decodeMs: null,
      kvUsage: null,
      queueDepth: null,
      batchSize: null,
      costUsd: null,
      cacheHit: f.cacheHit ?? null,
      finishReasons: null,
      attributes: f.attributes ?? '{}',
      resource: resourceFor(service, instance),
      events: f.events ?? '[]',
      scope: 'governor-bench',
      sampleWeight: null,
      endpoint: null,
    });
    out.push(
      span(
        {
          spanId: gatewayId,
          parentSpanId: null,
          name: 'POST /v1/chat/completions',
          hop: 'gateway',
          startNs: t0,
          endNs: end,
          isRoot: true,
          statusCode: req.failed ? 2 : 1,
          outcome,
          inputTokens,
          outputTokens,
          cachedTokens,
          cacheHit: cacheLookup ? cacheHit : null,
          firstTokenNs: req.failed ? null : firstToken,
          attributes: JSON.stringify({
            'gen_ai.request.model': req.pool.model,
            'governor.pool': req.pool.name,
            'governor.tenant': req.tenant,
            'governor.priority': req.priority,
            'gen_ai.usage.input_tokens': inputTokens,
            'gen_ai.usage.output_tokens': outputTokens,
          }),
          events: req.failed ? '[]' : `[{"timeNs":"${firstToken}","name":"first_token","attributes":{}}]`,
        },
        'gateway',
        'gw-1',
      ),
      span(
        { spanId: spanId(), name: 'route', hop: 'router', startNs: routerStart, endNs: cacheStart },
        'router',
        'router-1',
      ),
    );
    if (cacheLookup) {
      out.push(
        span(
          {
            spanId: spanId(),
            name: 'prefix_cache.lookup',
            hop: 'cache',
            startNs: cacheStart,
            endNs: runtimeStart,
            cacheHit,
          },
          'router',
          'router-1',
        ),
      );
    }
    out.push(
      span(
        {
          spanId: runtimeId,
          name: 'llm_request',
          hop: 'runtime',
          startNs: runtimeStart,
          endNs: runtimeEnd,
          replica: req.replica,
          statusCode: req.failed ? 2 : 1,
          outcome,
          inputTokens,
          outputTokens,
          serverTtftMs: req.failed ? null : Number(firstToken - runtimeStart) / 1e6,
        },
        'vllm',
        req.replica,
      ),
      span(
        {
          spanId: spanId(),
          parentSpanId: runtimeId,
          name: 'scheduler.queue',
          hop: 'scheduler',
          startNs: runtimeStart,
          endNs: prefillStart,
        },
        'vllm',
        req.replica,
      ),
      span(
        {
          spanId: spanId(),
          parentSpanId: runtimeId,
          name: 'prefill',
          hop: 'prefill',
          startNs: prefillStart,
          endNs: firstToken,
        },
        'vllm',
        req.replica,
      ),
      span(
        {
          spanId: spanId(),
          parentSpanId: runtimeId,
          name: 'decode',
          hop: 'decode',
          startNs: firstToken,
          endNs: runtimeEnd,
        },
        'vllm',
        req.replica,
      ),
    );
    return end;
  };

  const gauges = (out: MetricPointRow[], timeNs: bigint) => {
    for (const pool of BENCH_POOLS) {
      const base = {
        type: 'gauge',
        unit: null,
        timeNs,
        startNs: null,
        count: null,
        sum: null,
        min: null,
        max: null,
        bucketCounts: null,
        explicitBounds: null,
        quantiles: null,
        isMonotonic: false,
        temporality: 0,
        service: 'fleet-exporter',
        pool: pool.name,
        region: pool.region,
        model: pool.model,
        resource: '{"service.name":"fleet-exporter"}',
      };
      out.push({
        ...base,
        name: 'governor.pool.replicas',
        value: pool.replicas,
        replica: null,
        attributes: `{"governor.pool":"${pool.name}"}`,
      });
      for (let r = 0; r < pool.replicas; r++) {
        out.push({
          ...base,
          name: 'vllm:kv_cache_usage_perc',
          value: 0.3 + random() * 0.6,
          replica: `${pool.name}-${r}`,
          attributes: `{"governor.pool":"${pool.name}","governor.replica":"${pool.name}-${r}"}`,
        });
      }
    }
  };

  return {
    next(spanCount) {
      const spans: SpanRow[] = [];
      const metrics: MetricPointRow[] = [];
      while (spans.length < spanCount) {
        nowNs += intervalNs;
        while (nextGaugeNs <= nowNs) {
          gauges(metrics, nextGaugeNs);
          nextGaugeNs += GAUGE_INTERVAL_NS;
        }
        const due = workflows.peek();
        let pool: BenchPool;
        let tenant: string;
        let priority: number;
        let workflow: { id: string; type: string; step: number; steps: number } | null = null;
        let open: OpenWorkflow | null = null;
        if (due !== undefined && due.dueNs <= nowNs) {
          const w = workflows.pop()!;
          open = w;
          pool = BENCH_POOLS[w.poolIndex]!;
          tenant = w.tenant;
          priority = w.priority;
          workflow = { id: w.id, type: w.type, step: w.step, steps: w.steps };
        } else {
          const pick = random() * cumulative.at(-1)!;
          const poolIndex = cumulative.findIndex((c) => pick < c);
          pool = BENCH_POOLS[poolIndex]!;
          tenant = TENANTS[Math.floor(random() ** 2 * TENANTS.length)]!;
          priority = Math.floor(random() * 3);
          if (random() < 0.08) {
            const steps = 3 + Math.floor(random() * 3);
            const id = `wf-${idPrefix}-${requestIndex.toString(36)}`;
            const type = WORKFLOW_TYPES[Math.floor(random() * WORKFLOW_TYPES.length)]!;
            workflow = { id, type, step: 1, steps };
            open = { id, type, tenant, priority, step: 1, steps, poolIndex, dueNs: nowNs };
          }
        }
        const replica = `${pool.name}-${Math.floor(random() * pool.replicas)}`;
        let attempt = 1;
        let failed = random() < 0.03;
        let end = pushRequest(spans, {
          startNs: nowNs,
          pool,
          replica,
          tenant,
          priority,
          workflow,
          attempt,
          failed,
        });
        // A failed request is retried once by the client, right after it failed.
        if (failed && random() < 0.7) {
          attempt = 2;
          failed = random() < 0.1;
          end = pushRequest(spans, {
            startNs: end,
            pool,
            replica,
            tenant,
            priority,
            workflow,
            attempt,
            failed,
          });
        }
        // The next step follows after the agent's think/tool time; a failed step may end the workflow.
        if (open && open.step < open.steps && !(failed && random() < 0.5)) {
          open.step++;
          open.dueNs = end + BigInt(Math.round(exp(3000) * 1e6));
          workflows.push(open);
        }
      }
      return { spans, metrics, timeNs: nowNs };
    },
  };
}

interface OpenWorkflow {
  id: string;
  type: string;
  tenant: string;
  priority: number;
  step: number;
  steps: number;
  poolIndex: number;
  dueNs: bigint;
}

function createHeap<T>(before: (a: T, b: T) => boolean) {
  const items: T[] = [];
  const swap = (i: number, j: number) => {
    const t = items[i]!;
    items[i] = items[j]!;
    items[j] = t;
  };
  return {
    peek: (): T | undefined => items[0],
    push(item: T) {
      items.push(item);
      for (let i = items.length - 1; i > 0; ) {
        const parent = (i - 1) >> 1;
        if (!before(items[i]!, items[parent]!)) break;
        swap(i, parent);
        i = parent;
      }
    },
    pop(): T | undefined {
      const top = items[0];
      const last = items.pop();
      if (items.length > 0 && last !== undefined) {
        items[0] = last;
        for (let i = 0; ; ) {
          const l = 2 * i + 1;
          const r = l + 1;
          let m = i;
          if (l < items.length && before(items[l]!, items[m]!)) m = l;
          if (r < items.length && before(items[r]!, items[m]!)) m = r;
          if (m === i) break;
          swap(i, m);
          i = m;
        }
      }
      return top;
    },
  };
}
