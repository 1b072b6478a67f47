// Kubernetes identities of the simulated fleet, as the Collector's k8sattributes processor and the
// prometheus receiver's kubernetes_sd_configs report them. All derive from the seed, so the same
// seed names the same pods, IPs and GPUs.

import { hashCombine, hashString } from '../engine/random.ts';

/** Alphabet of generated Kubernetes names (k8s.io/apimachinery/pkg/util/rand: no vowels, no 0/1/3). */
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** The namespace the inference workloads and the gateway run in. */
export const WORKLOAD_NAMESPACE = 'inference';
export const GATEWAY_DEPLOYMENT = 'inference-gateway';
/** vLLM's OpenAI server port (its /metrics too). */
export const VLLM_PORT = 8000;
/** Container name of the vLLM pods (the `container` label DCGM reports for a GPU's workload). */
export const VLLM_CONTAINER = 'vllm';
export const DCGM_NAMESPACE = 'gpu-operator';
export const DCGM_DAEMONSET = 'nvidia-dcgm-exporter';
export const DCGM_PORT = 9400;

/** GPU model names as nvidia-smi / DCGM report them, and frame-buffer size in MiB. */
const GPU_MODELS: Record<string, { modelName: string; memoryMiB: number }> = {
  H100: { modelName: 'NVIDIA H100 80GB HBM3', memoryMiB: 81_559 },
  A100: { modelName: 'NVIDIA A100-SXM4-80GB', memoryMiB: 81_920 },
  L40S: { modelName: 'NVIDIA L40S', memoryMiB: 46_068 },
};

export function describeGpu(gpuType: string): { modelName: string; memoryMiB: number } {
  return GPU_MODELS[gpuType.toUpperCase()] ?? { modelName: `NVIDIA ${gpuType}`, memoryMiB: 81_920 };
}

export interface PodIdentity {
  name: string;
  uid: string;
  ip: string;
  namespace: string;
  nodeName: string;
}

export interface K8sIdentity {
  /** A Deployment's pod: `<deployment>-<pod-template-hash (10)>-<id (5)>`, stable per replica index. */
  deploymentPod(deployment: string, index: number, nodeName: string): PodIdentity;
  /** The ReplicaSet name of a Deployment's pods (`<deployment>-<pod-template-hash>`). */
  replicaSetName(deployment: string): string;
  /** The DCGM exporter DaemonSet pod on a node. */
  exporterPod(nodeIndex: number, nodeName: string): PodIdentity;
  nodeName(nodeIndex: number, region: string): string;
  gpuUuid(nodeIndex: number, gpu: number): string;
}

export function createK8sIdentity(seed: number): K8sIdentity {
  const takenIps = new Map<string, string>();
  const pods = new Map<string, PodIdentity>();
  const randomName = (length: number, ...inputs: number[]): string => {
    let out = '';
    for (let i = 0; i < length; i++)
      out += NAME_ALPHABET[hashCombine(seed, ...inputs, i) % NAME_ALPHABET.length];
    return out;
  };
  const hex = (count: number, ...inputs: number[]): string => {
    let out = '';
    for (let i = 0; out.length < count; i++)
      out += hashCombine(seed, ...inputs, i)
        .toString(16)
        .padStart(8, '0');
    return out.slice(0, count);
  };
  const uuid = (...inputs: number[]): string => {
    const h = hex(32, ...inputs);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
  };
  /** A pod IP in 10.64.0.0/10, unique across the run (a collision draws again). */
  const podIp = (key: string): string => {
    for (let attempt = 0; ; attempt++) {
      const h = hashCombine(seed, hashString(key), attempt, 0x1e7);
      const ip = `10.${64 + ((h >>> 16) & 63)}.${(h >>> 8) & 255}.${2 + ((h & 255) % 252)}`;
      const owner = takenIps.get(ip);
      if (owner === undefined || owner === key) {
        takenIps.set(ip, key);
        return ip;
      }
    }
  };
  const podTemplateHash = (deployment: string) => randomName(10, hashString(deployment), 0x7e3);
  const identity: K8sIdentity = {
    replicaSetName: (deployment) => `${deployment}-${podTemplateHash(deployment)}`,
    deploymentPod(deployment, index, nodeName) {
      const key = `${deployment}/${index}`;
      const known = pods.get(key);
      if (known) return known;
      const pod: PodIdentity = {
        name: `${identity.replicaSetName(deployment)}-${randomName(5, hashString(deployment), index, 0x90d)}`,
        uid: uuid(hashString(key), 0x51d),
        ip: podIp(key),
        namespace: WORKLOAD_NAMESPACE,
        nodeName,
      };
      pods.set(key, pod);
      return pod;
    },
    exporterPod(nodeIndex, nodeName) {
      const key = `${DCGM_DAEMONSET}/${nodeIndex}`;
      const known = pods.get(key);
      if (known) return known;
      const pod: PodIdentity = {
        name: `${DCGM_DAEMONSET}-${randomName(5, hashString(DCGM_DAEMONSET), nodeIndex)}`,
        uid: uuid(hashString(key), 0x51d),
        ip: podIp(key),
        namespace: DCGM_NAMESPACE,
        nodeName,
      };
      pods.set(key, pod);
      return pod;
    },
    nodeName: (nodeIndex, region) => `gpu-${region}-${randomName(5, 0x40de, nodeIndex)}`,
    gpuUuid: (nodeIndex, gpu) => `GPU-${uuid(0x69b0, nodeIndex, gpu)}`,
  };
  return identity;
}
