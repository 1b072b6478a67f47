import type { Attributes } from './types.ts';
import { toStringOrNull } from './attribute-values.ts';

// Which pool, replica and GPU type a span or metric point belongs to, from the attributes real
// fleets carry: the OpenTelemetry Collector's k8sattributes processor adds `k8s.deployment.name`,
// `k8s.pod.name` and pod labels to the resource; its prometheus receiver sets `service.name` = job
// and `service.instance.id` = instance; vLLM and SGLang set `service.name` from OTEL_SERVICE_NAME.
// `governor.*` attributes and attribute_aliases stay explicit overrides (applied by the caller).

export interface PoolIdentity {
  name: string;
  /** Every entry must equal the resource's or the span's/point's attribute of that key. */
  match?: Readonly<Record<string, string>> | undefined;
}

export interface FleetIdentityOptions {
  pools: readonly PoolIdentity[];
  /** Pricing keys (`pricing.gpu_hour_usd`), so a GPU product name resolves to a key that has a price. */
  gpuTypes?: readonly string[];
  /** Head-sampling probability per service.name for emitters without OTel's `th` in tracestate. */
  samplingRatios?: Readonly<Record<string, number>>;
}

export interface FleetIdentity {
  /** The configured pool these attributes select, or null. */
  pool(attrs: Attributes, resource: Attributes): string | null;
  /** The replica (pod) a runtime span's resource names, or null. */
  replica(attrs: Attributes, resource: Attributes): string | null;
  /**
   * The replica a metric point is about: its `pod` label first (DCGM's GPU-to-pod mapping, or a
   * relabelled scrape: the resource may be the exporter's own pod), then the resource's keys.
   */
  metricReplica(attrs: Attributes, resource: Attributes): string | null;
  /** A pricing key for the GPU these attributes describe, or null. */
  gpuType(attrs: Attributes, resource: Attributes): string | null;
  samplingRatio(service: string | null): number | null;
  /**
   * The configured pool an InferencePool name denotes (the Gateway API Inference Extension's
   * `inference_pool_*{name}` gauges): the pool of that name, else the pool whose `match` names it.
   */
  poolNamed(name: string): string | null;
}

const DEPLOYMENT_KEYS = ['k8s.deployment.name', 'k8s.statefulset.name'] as const;
/** The replica keys in order: the pod, else the SDK's instance id (the prometheus receiver's target), else the host. */
const REPLICA_KEYS = ['k8s.pod.name', 'service.instance.id', 'host.name'] as const;
/** Where a GPU's product name arrives: DCGM's label, node labels as k8sattributes or relabelling copy them. */
const GPU_PRODUCT_KEYS = [
  'modelName',
  'nvidia.com/gpu.product',
  'k8s.node.label.nvidia.com/gpu.product',
  'k8s.node.labels.nvidia.com/gpu.product',
  'label_nvidia_com_gpu_product',
] as const;

/**
 * The workload a pod belongs to: k8sattributes' `k8s.deployment.name` (or a StatefulSet's name),
 * else the prometheus receiver's `k8s.replicaset.name` less the pod-template hash Kubernetes appends
 * to a Deployment's ReplicaSets (`vllm-llama8b-7d9f6c5b4` → `vllm-llama8b`).
 */
function deploymentName(resource: Attributes): string | null {
  for (const key of DEPLOYMENT_KEYS) {
    const name = toStringOrNull(resource[key]);
    if (name !== null) return name;
  }
  const replicaSet = toStringOrNull(resource['k8s.replicaset.name']);
  if (replicaSet === null) return null;
  const cut = replicaSet.lastIndexOf('-');
  return cut > 0 ? replicaSet.slice(0, cut) : replicaSet;
}

function read(attrs: Attributes, resource: Attributes, key: string): string | null {
  return toStringOrNull(attrs[key] ?? resource[key]);
}

export function createFleetIdentity(options: FleetIdentityOptions): FleetIdentity {
  const byName = new Map(options.pools.filter((p) => !p.match).map((p) => [p.name, p.name]));
  const matchers = options.pools
    .filter((p) => p.match && Object.keys(p.match).length > 0)
    .map((p) => ({ name: p.name, entries: Object.entries(p.match!) }));
  const gpuKeys = [...(options.gpuTypes ?? [])].sort((a, b) => b.length - a.length);
  const ratios = options.samplingRatios ?? {};
  return {
    pool(attrs, resource) {
      for (const m of matchers) {
        if (m.entries.every(([key, value]) => read(attrs, resource, key) === value)) return m.name;
      }
      if (byName.size === 0) return null;
      const deployment = deploymentName(resource);
      if (deployment !== null) return byName.get(deployment) ?? null;
      const service = toStringOrNull(resource['service.name']);
      return service === null ? null : (byName.get(service) ?? null);
    },
    replica(attrs, resource) {
      for (const key of REPLICA_KEYS) {
        const value = toStringOrNull(resource[key]) ?? toStringOrNull(attrs[key]);
        if (value !== null) return value;
      }
      return null;
    },
    metricReplica(attrs, resource) {
      return toStringOrNull(attrs.pod) ?? toStringOrNull(attrs['k8s.pod.name']) ?? this.replica({}, resource);
    },
    gpuType(attrs, resource) {
      for (const key of GPU_PRODUCT_KEYS) {
        const product = read(attrs, resource, key);
        if (product !== null) return gpuTypeFromProduct(product, gpuKeys);
      }
      return null;
    },
    poolNamed(name) {
      if (options.pools.some((p) => p.name === name)) return name;
      return matchers.find((m) => m.entries.some(([, value]) => value === name))?.name ?? null;
    },
    samplingRatio(service) {
      return service === null ? null : (ratios[service] ?? null);
    },
  };
}

/**
 * "NVIDIA H100 80GB HBM3" → "H100": the longest configured pricing key found as a word of the
 * product name, else the first word after the vendor ("A100-SXM4-80GB" → "A100").
 */
export function gpuTypeFromProduct(product: string, pricingKeys: readonly string[] = []): string | null {
  const words = product
    .toUpperCase()
    .split(/[\s_/-]+/)
    .filter((w) => w !== '');
  for (const key of pricingKeys) {
    const k = key.toUpperCase();
    if (words.includes(k)) return key;
  }
  const vendor = new Set(['NVIDIA', 'AMD', 'TESLA', 'GEFORCE', 'INSTINCT', 'RADEON']);
  const first = words.find((w) => !vendor.has(w));
  return first ?? null;
}

/**
 * OpenTelemetry probability sampling: `th` in the `ot` entry of tracestate is the rejection
 * threshold as up to 14 hex digits (right-padded with zeros); the sampling probability is
 * 1 − th / 2^56 (th = 0 keeps everything). Returns null when the trace state carries no threshold.
 */
export function samplingProbabilityFromTraceState(traceState: string): number | null {
  if (traceState === '' || !traceState.includes('ot=')) return null;
  for (const member of traceState.split(',')) {
    const eq = member.indexOf('=');
    if (eq < 0 || member.slice(0, eq).trim() !== 'ot') continue;
    for (const field of member.slice(eq + 1).split(';')) {
      if (!field.startsWith('th:')) continue;
      const hex = field.slice(3).trim();
      if (!/^[0-9a-f]{1,14}$/.test(hex)) return null;
      const th = Number.parseInt(hex.padEnd(14, '0'), 16);
      const p = 1 - th / 2 ** 56;
      return p > 0 ? p : null;
    }
  }
  return null;
}
