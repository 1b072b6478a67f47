// Per-step latency of a continuously batched replica, after BLIS (step ≈ β0 + β1·uncached prefill
// tokens + β2·decode tokens in the batch), with the fixed cost split in two so that both published
// reference points hold at once: a step that carries prefill pays the scheduler/graph overhead of a
// non-CUDA-graph forward (llm-d inference-sim: "prefill 25–40 ms + 0.15–0.30 ms/token" for 8B on
// H100), a pure decode step does not ("inter-token 10–15 ms").

export interface StepTimeModel {
  /** Fixed cost of every step (ms). */
  baseMs: number;
  /** Extra fixed cost of a step that carries prefill tokens (ms). */
  prefillOverheadMs: number;
  /** Cost per uncached prompt token computed in the step (ms). */
  prefillPerTokenMs: number;
  /** Cost per sequence decoding one token in the step (ms). */
  decodePerSeqMs: number;
}

export interface StepComposition {
  prefillTokens: number;
  decodeSeqs: number;
}

/** Duration of one engine step in ms. `slowdown` multiplies it (GPU degradation, warm-up). */
export function computeStepMs(model: StepTimeModel, step: StepComposition, slowdown = 1): number {
  const prefill =
    step.prefillTokens > 0 ? model.prefillOverheadMs + model.prefillPerTokenMs * step.prefillTokens : 0;
  return (model.baseMs + prefill + model.decodePerSeqMs * step.decodeSeqs) * slowdown;
}

/** Time to first token of a lone request on an idle replica (one prefill step that emits the first token). */
export function computeIsolatedTtftMs(model: StepTimeModel, uncachedPromptTokens: number): number {
  return computeStepMs(model, { prefillTokens: uncachedPromptTokens, decodeSeqs: 0 });
}

/**
 * Coefficients by GPU type and model size. H100 values sit inside the llm-d simulator's published
 * ranges (8B: prefill 25–40 ms + 0.15–0.30 ms/token, inter-token 10–15 ms; 70B TP4: 70–110 ms +
 * 0.6–0.9 ms/token, inter-token 25–40 ms). A100 and L40S are scaled from H100 by the ratio of
 * dense BF16 throughput (prefill, compute-bound) and HBM bandwidth (decode, memory-bound):
 * A100-80GB ≈ 0.32× compute / 0.6× bandwidth of H100 SXM; L40S ≈ 0.37× / 0.26×.
 */
const STEP_MODELS: Record<string, StepTimeModel> = {
  'H100/8B': { baseMs: 10, prefillOverheadMs: 20, prefillPerTokenMs: 0.2, decodePerSeqMs: 0.03 },
  'H100/70B': { baseMs: 28, prefillOverheadMs: 60, prefillPerTokenMs: 0.75, decodePerSeqMs: 0.05 },
  'A100/8B': { baseMs: 16, prefillOverheadMs: 24, prefillPerTokenMs: 0.45, decodePerSeqMs: 0.05 },
  'A100/70B': { baseMs: 45, prefillOverheadMs: 80, prefillPerTokenMs: 1.6, decodePerSeqMs: 0.08 },
  'L40S/8B': { baseMs: 30, prefillOverheadMs: 25, prefillPerTokenMs: 0.4, decodePerSeqMs: 0.1 },
};

export function listKnownStepModels(): string[] {
  return Object.keys(STEP_MODELS);
}

/** Looks up the coefficients for a GPU type and model size such as `8B`; undefined when unknown. */
export function findStepModel(gpuType: string, modelSize: string): StepTimeModel | undefined {
  const found = STEP_MODELS[`${gpuType.toUpperCase()}/${modelSize.toUpperCase()}`];
  return found ? { ...found } : undefined;
}

/** Parameter count from a model name such as `llama-3.1-70b-instruct` → `70B`. */
export function inferModelSize(model: string): string | undefined {
  const match = /(\d+(?:\.\d+)?)b\b/i.exec(model);
  return match ? `${match[1]}B` : undefined;
}
