/**
 * Prefix-block ids of a prompt (512 tokens per block, Mooncake's convention): `head` explicit ids
 * followed by `rangeCount` consecutive ids starting at `rangeBase`. Session contexts that grow turn by
 * turn share a range, so their prefixes match without materialising every id.
 */
export interface PrefixBlocks {
  head: readonly number[];
  rangeBase: number;
  rangeCount: number;
}

export const PREFIX_BLOCK_TOKENS = 512;

export function countPrefixBlocks(prefix: PrefixBlocks): number {
  return prefix.head.length + prefix.rangeCount;
}

export function getPrefixBlock(prefix: PrefixBlocks, index: number): number {
  return index < prefix.head.length ? prefix.head[index]! : prefix.rangeBase + (index - prefix.head.length);
}

/** One LLM call of a task. */
export interface WorkloadStep {
  inputTokens: number;
  outputTokens: number;
  /**
   * Closed loop: delay after the previous step finished (tool time, think time). For step 0, delay
   * after the task starts.
   */
  thinkMs: number;
  /** Open loop (trace replays with per-request timestamps): issue at task start + offset regardless of completions. */
  atOffsetMs?: number;
  prefix?: PrefixBlocks;
}

export type WorkflowType = 'chat' | 'copilot' | 'research' | 'autonomous' | 'replay' | 'coding-agent';

/** A unit of user intent: one workflow (or one request, for plain trace replays). */
export interface WorkloadTask {
  id: string;
  /** Sim ms since run start; for chained tasks, the gap after the predecessor ends. */
  startMs: number;
  type: WorkflowType;
  tenant: string;
  priority: number;
  model: string;
  steps: WorkloadStep[];
  /** Steps arrive at their `atOffsetMs` (true) or after the previous step finishes (false). */
  openLoop: boolean;
  /** Conversation/session id shared by tasks of one session (`gen_ai.conversation.id`). */
  conversationId?: string;
  /** A task that starts `next.startMs` after this one ends (agent sessions split into episodes). */
  next?: WorkloadTask;
}

export interface Workload {
  name: string;
  description: string;
  /** Epoch ms of simulated time 0. */
  startEpochMs: number;
  /** Root tasks sorted by `startMs` (chained tasks hang off `next`). */
  tasks: WorkloadTask[];
}

export interface WorkloadOptions {
  seed: number;
  durationMs: number;
  /** Multiplies trace timestamps (0.5 plays a trace twice as fast). */
  timeScale?: number;
  /** Scales the arrival rate (copies or thins tasks). */
  rateMultiplier?: number;
  dataDir: string;
  /** Epoch ms for sim time 0 when the workload carries no absolute time. */
  startEpochMs?: number;
  /** Arrival shape for synthetic workloads. */
  shape?: ArrivalShape;
}

export type ArrivalShape = 'flat' | 'diurnal' | 'burst' | 'diurnal+burst';
export const ARRIVAL_SHAPES: readonly ArrivalShape[] = ['flat', 'diurnal', 'burst', 'diurnal+burst'];
