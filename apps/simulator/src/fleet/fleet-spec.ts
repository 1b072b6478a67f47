import { findStepModel, inferModelSize, listKnownStepModels } from './step-time-model.ts';
import type { StepTimeModel } from './step-time-model.ts';

/** One pool of identical replicas serving one model on one GPU type in one region. */
export interface PoolSpec {
  name: string;
  model: string;
  gpuType: string;
  region: string;
  /** Replicas running (warm) at the start of the run. */
  replicas: number;
  minReplicas: number;
  maxReplicas: number;
  gpusPerReplica: number;
  gpuHourUsd: number;
  /** KV-cache capacity per replica in tokens. */
  kvCapacityTokens: number;
  /** vLLM `max_num_seqs`. */
  maxBatchSeqs: number;
  /** vLLM `max_num_batched_tokens` (chunked-prefill token budget per step; V1 default 8192 on 80 GB GPUs). */
  maxBatchedTokens: number;
  /** Time from scale-up to ready (image pull, weight load, CUDA graph capture). */
  coldStartMs: number;
  /** Routing weight among pools serving the same model. */
  weight: number;
  maxContextTokens: number;
  stepModel: StepTimeModel;
}

export interface FleetSpec {
  pools: PoolSpec[];
}

const GPU_MEMORY_GB: Record<string, number> = { H100: 80, A100: 80, L40S: 48 };
/** Bytes of KV cache per token (all layers, K and V, BF16): Llama-3.1-8B 128 KiB, 70B 320 KiB. */
const KV_BYTES_PER_TOKEN: Record<string, number> = { '8B': 131_072, '70B': 327_680 };
const WEIGHTS_GB: Record<string, number> = { '8B': 16, '70B': 141 };
/** vLLM's default gpu_memory_utilization. */
const GPU_MEMORY_UTILIZATION = 0.9;

/** KV capacity from GPU memory left after weights, as vLLM's profiler computes it (activations ignored). */
export function estimateKvCapacityTokens(
  gpuType: string,
  modelSize: string,
  gpus: number,
): number | undefined {
  const memory = GPU_MEMORY_GB[gpuType.toUpperCase()];
  const bytesPerToken = KV_BYTES_PER_TOKEN[modelSize.toUpperCase()];
  const weights = WEIGHTS_GB[modelSize.toUpperCase()];
  if (memory === undefined || bytesPerToken === undefined || weights === undefined) return undefined;
  const freeBytes = (memory * gpus * GPU_MEMORY_UTILIZATION - weights) * 1e9;
  return freeBytes > 0 ? Math.floor(freeBytes / bytesPerToken) : undefined;
}

export const MODEL_8B = 'llama-3.1-8b-instruct';
export const MODEL_70B = 'llama-3.1-70b-instruct';

/**
 * Three pools in two regions: Llama-3.1-8B on H100 (us-east) and A100 (us-west), Llama-3.1-70B on
 * 4×H100 (us-east). Initial replicas are moderate — enough for the default workload at default rate
 * without much headroom — so that autoscalers and the control loop have something to do.
 */
export function createDefaultFleet(): FleetSpec {
  return {
    pools: [
      buildPoolSpec({
        name: 'llama8b-h100-east',
        model: MODEL_8B,
        gpuType: 'H100',
        region: 'us-east',
        replicas: 3,
        gpuHourUsd: 4.0,
        weight: 0.6,
        maxReplicas: 16,
      }),
      buildPoolSpec({
        name: 'llama8b-a100-west',
        model: MODEL_8B,
        gpuType: 'A100',
        region: 'us-west',
        replicas: 3,
        gpuHourUsd: 2.5,
        weight: 0.4,
        maxReplicas: 16,
      }),
      buildPoolSpec({
        name: 'llama70b-h100-east',
        model: MODEL_70B,
        gpuType: 'H100',
        region: 'us-east',
        gpusPerReplica: 4,
        replicas: 2,
        gpuHourUsd: 4.0,
        weight: 1,
        maxReplicas: 8,
        coldStartMs: 420_000,
      }),
    ],
  };
}

export type PoolSpecInput = Partial<PoolSpec> & Pick<PoolSpec, 'name' | 'model' | 'gpuType' | 'region'>;

/** Fills defaults (step model, KV capacity, cold start…) from the GPU type and model size. */
export function buildPoolSpec(input: PoolSpecInput): PoolSpec {
  const gpusPerReplica = input.gpusPerReplica ?? 1;
  const modelSize = inferModelSize(input.model) ?? '';
  const stepModel = input.stepModel ?? findStepModel(input.gpuType, modelSize);
  if (!stepModel) {
    throw new Error(
      `pool "${input.name}": no step-time model for ${input.gpuType}/${modelSize || input.model}; ` +
        `give "stepModel" {baseMs, prefillOverheadMs, prefillPerTokenMs, decodePerSeqMs} or use one of ${listKnownStepModels().join(', ')}`,
    );
  }
  const kvCapacityTokens =
    input.kvCapacityTokens ?? estimateKvCapacityTokens(input.gpuType, modelSize, gpusPerReplica);
  if (!kvCapacityTokens) {
    throw new Error(
      `pool "${input.name}": cannot derive KV capacity for ${input.gpuType}/${modelSize}; give "kvCapacityTokens"`,
    );
  }
  const replicas = input.replicas ?? 2;
  return {
    name: input.name,
    model: input.model,
    gpuType: input.gpuType,
    region: input.region,
    replicas,
    minReplicas: input.minReplicas ?? 1,
    maxReplicas: input.maxReplicas ?? Math.max(16, replicas),
    gpusPerReplica,
    gpuHourUsd: input.gpuHourUsd ?? 4.0,
    kvCapacityTokens,
    maxBatchSeqs: input.maxBatchSeqs ?? 256,
    maxBatchedTokens: input.maxBatchedTokens ?? 8192,
    coldStartMs: input.coldStartMs ?? (modelSize === '70B' ? 420_000 : 180_000),
    weight: input.weight ?? 1,
    maxContextTokens: input.maxContextTokens ?? 131_072,
    stepModel,
  };
}

const NUMBER_FIELDS = [
  'replicas',
  'minReplicas',
  'maxReplicas',
  'gpusPerReplica',
  'gpuHourUsd',
  'kvCapacityTokens',
  'maxBatchSeqs',
  'maxBatchedTokens',
  'coldStartMs',
  'weight',
  'maxContextTokens',
] as const;
const STRING_FIELDS = ['name', 'model', 'gpuType', 'region'] as const;
const STEP_FIELDS = ['baseMs', 'prefillOverheadMs', 'prefillPerTokenMs', 'decodePerSeqMs'] as const;

/** Validates a `--fleet` JSON document: `{ "pools": [ { name, model, gpuType, region, … } ] }`. */
export function parseFleetSpec(raw: unknown): FleetSpec {
  if (typeof raw !== 'object' || raw === null || !Array.isArray((raw as { pools?: unknown }).pools)) {
    throw new Error('fleet file: expected an object with a "pools" array');
  }
  const pools = (raw as { pools: unknown[] }).pools.map((entry, index) => {
    if (typeof entry !== 'object' || entry === null)
      throw new Error(`fleet file: pools.${index} must be an object`);
    const record = entry as Record<string, unknown>;
    const known = new Set<string>([...NUMBER_FIELDS, ...STRING_FIELDS, 'stepModel']);
    for (const key of Object.keys(record)) {
      if (!known.has(key))
        throw new Error(`fleet file: pools.${index}.${key} is not a known field (${[...known].join(', ')})`);
    }
    for (const key of STRING_FIELDS) {
      if (typeof record[key] !== 'string' || record[key] === '') {
        throw new Error(`fleet file: pools.${index}.${key} must be a non-empty string`);
      }
    }
    for (const key of NUMBER_FIELDS) {
      const value = record[key];
      if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value) || value < 0)) {
        throw new Error(`fleet file: pools.${index}.${key} must be a non-negative number`);
      }
    }
    let stepModel: StepTimeModel | undefined;
    if (record.stepModel !== undefined) {
      const step = record.stepModel as Record<string, unknown>;
      for (const key of STEP_FIELDS) {
        if (typeof step?.[key] !== 'number' || (step[key] as number) < 0) {
          throw new Error(`fleet file: pools.${index}.stepModel.${key} must be a non-negative number`);
        }
      }
      stepModel = step as unknown as StepTimeModel;
    }
    return buildPoolSpec({ ...(record as unknown as PoolSpecInput), ...(stepModel ? { stepModel } : {}) });
  });
  if (pools.length === 0) throw new Error('fleet file: "pools" must not be empty');
  const names = new Set<string>();
  for (const pool of pools) {
    if (names.has(pool.name)) throw new Error(`fleet file: duplicate pool name "${pool.name}"`);
    names.add(pool.name);
    if (pool.gpusPerReplica < 1) throw new Error(`fleet file: pool "${pool.name}" needs gpusPerReplica >= 1`);
  }
  return { pools };
}
