import { DEFAULT_START_EPOCH_MS } from '../engine/sim-time.ts';
import { createRng } from '../engine/random.ts';
import type { Rng } from '../engine/random.ts';
import { MODEL_70B, MODEL_8B } from '../fleet/fleet-spec.ts';
import { createSessionPrefixer, getSharedPromptBlocks } from './prefix-ids.ts';
import type {
  ArrivalShape,
  Workload,
  WorkloadOptions,
  WorkloadStep,
  WorkloadTask,
  WorkflowType,
} from './workload-types.ts';

export type SyntheticKind = 'chat' | 'copilot' | 'research' | 'autonomous';

/** Tasks per second at rate multiplier 1, chosen to load the default fleet moderately. */
export const SYNTHETIC_RATES: Record<SyntheticKind, number> = {
  chat: 4,
  copilot: 0.15,
  research: 0.02,
  autonomous: 0.012,
};

/**
 * Autonomous agents are launched in the first 25% of the run (like batch jobs), so that agents of
 * a thousand-plus calls can finish within a one-hour run and its drain.
 */
const AUTONOMOUS_LAUNCH_SHARE = 0.25;

/** The mix runs every kind at half these rates (autonomous agents already dominate tokens). */
const MIX_SHARE = 0.5;

/**
 * Relative arrival rate at sim time t. `diurnal` compresses one day into the run (trough at the
 * start, peak ×1.6 halfway); `burst` adds 4-minute bursts at ×3 every 20 minutes from minute 10.
 */
export function getShapeFactor(shape: ArrivalShape, tMs: number, durationMs: number): number {
  let factor = 1;
  if (shape === 'diurnal' || shape === 'diurnal+burst') {
    factor *= 1 + 0.6 * Math.sin((2 * Math.PI * tMs) / durationMs - Math.PI / 2);
  }
  if (shape === 'burst' || shape === 'diurnal+burst') {
    const phaseMs = (tMs - 600_000) % 1_200_000;
    if (tMs >= 600_000 && phaseMs < 240_000) factor *= 3;
  }
  return factor;
}

const MAX_SHAPE_FACTOR = 1.6 * 3;

/** Arrival times of a non-homogeneous Poisson process (Lewis–Shedler thinning). */
export function generateArrivalTimes(
  rng: Rng,
  ratePerS: number,
  shape: ArrivalShape,
  fromMs: number,
  toMs: number,
  shapeDurationMs: number,
): number[] {
  const times: number[] = [];
  if (ratePerS <= 0) return times;
  const maxRatePerMs = (ratePerS * MAX_SHAPE_FACTOR) / 1000;
  let t = fromMs;
  for (;;) {
    t += rng.exponential(1 / maxRatePerMs);
    if (t >= toMs) break;
    if (rng.next() * MAX_SHAPE_FACTOR < getShapeFactor(shape, t, shapeDurationMs)) times.push(t);
  }
  return times;
}

const clamp = (value: number, min: number, max: number): number =>
  Math.max(min, Math.min(max, Math.round(value)));

interface TaskBlueprint {
  type: WorkflowType;
  tenant: string;
  priority: number;
  model: string;
  steps: WorkloadStep[];
}

/** Chat: one call per task mostly, sometimes a short follow-up; a free tier at priority 0. */
function buildChat(rng: Rng, sessionIndex: number): TaskBlueprint {
  const free = rng.chance(0.3);
  const tenant = free ? 'hooli-free' : 'acme-chat';
  const system = getSharedPromptBlocks(`system:${tenant}`, 2);
  const prefixer = createSessionPrefixer(sessionIndex, system);
  const turns = rng.chance(0.8) ? 1 : 2 + rng.int(2);
  const steps: WorkloadStep[] = [];
  let context = system.length * 512;
  for (let i = 0; i < turns; i++) {
    const user = clamp(rng.logNormal(400, 0.9), 20, 8000);
    const output = clamp(rng.logNormal(200, 0.7), 10, 2000);
    const input = context + user;
    steps.push({
      inputTokens: input,
      outputTokens: output,
      thinkMs: i === 0 ? 0 : rng.uniform(5000, 40_000),
      prefix: prefixer(input),
    });
    context = input + output;
  }
  return {
    type: 'chat',
    tenant,
    priority: free ? 0 : 2,
    model: rng.chance(0.85) ? MODEL_8B : MODEL_70B,
    steps,
  };
}

/** IDE copilot: 10–20 quick calls over one repository context. */
function buildCopilot(rng: Rng, sessionIndex: number): TaskBlueprint {
  const prefixer = createSessionPrefixer(sessionIndex);
  const count = 10 + rng.int(11);
  const repoContext = clamp(rng.uniform(1500, 6000), 1500, 6000);
  let history = 0;
  const steps: WorkloadStep[] = [];
  for (let i = 0; i < count; i++) {
    const fresh = clamp(rng.logNormal(500, 0.6), 50, 4000);
    const output = clamp(rng.logNormal(90, 0.6), 5, 600);
    history = history + fresh > 8000 ? fresh : history + fresh;
    const input = repoContext + history;
    steps.push({
      inputTokens: input,
      outputTokens: output,
      thinkMs: i === 0 ? 0 : rng.uniform(500, 4000),
      prefix: prefixer(input),
    });
    history += output;
  }
  return { type: 'copilot', tenant: 'globex-ide', priority: 2, model: MODEL_8B, steps };
}

/** Agentic loop: context grows by tool results and outputs, compacted past a cap. */
function buildAgentLoop(
  rng: Rng,
  sessionIndex: number,
  count: number,
  growth: {
    start: number;
    tool: number;
    capTokens: number;
    compactTo: number;
    output: number;
    thinkMs: [number, number];
  },
): WorkloadStep[] {
  const prefixer = createSessionPrefixer(sessionIndex);
  let context = growth.start;
  const steps: WorkloadStep[] = [];
  for (let i = 0; i < count; i++) {
    const output = clamp(rng.logNormal(growth.output, 0.6), 5, 2000);
    steps.push({
      inputTokens: context,
      outputTokens: output,
      thinkMs: i === 0 ? 0 : rng.uniform(growth.thinkMs[0], growth.thinkMs[1]),
      prefix: prefixer(context),
    });
    context += output + clamp(rng.logNormal(growth.tool, 0.6), 20, 20_000);
    if (context > growth.capTokens) context = growth.compactTo;
  }
  return steps;
}

/** Research agent: ~50 calls with tool use between them. */
function buildResearch(rng: Rng, sessionIndex: number): TaskBlueprint {
  const steps = buildAgentLoop(rng, sessionIndex, 40 + rng.int(21), {
    start: 3000,
    tool: 1500,
    capTokens: 40_000,
    compactTo: 8000,
    output: 350,
    thinkMs: [1000, 8000],
  });
  return {
    type: 'research',
    tenant: 'initech-research',
    priority: 1,
    model: rng.chance(0.4) ? MODEL_70B : MODEL_8B,
    steps,
  };
}

/** Autonomous agent: thousands of calls, no human in the loop. */
export function buildAutonomous(
  rng: Rng,
  sessionIndex: number,
  tenant = 'umbrella-agents',
  stepRange: [number, number] = [1000, 1200],
): TaskBlueprint {
  const steps = buildAgentLoop(rng, sessionIndex, stepRange[0] + rng.int(stepRange[1] - stepRange[0] + 1), {
    start: 4000,
    tool: 500,
    capTokens: 32_000,
    compactTo: 6000,
    output: 80,
    thinkMs: [100, 500],
  });
  return { type: 'autonomous', tenant, priority: 0, model: MODEL_8B, steps };
}

const BUILDERS: Record<SyntheticKind, (rng: Rng, sessionIndex: number) => TaskBlueprint> = {
  chat: buildChat,
  copilot: buildCopilot,
  research: buildResearch,
  autonomous: (rng, index) => buildAutonomous(rng, index),
};

/** Session index ranges per kind keep prefix-id spaces of different kinds apart. */
const SESSION_OFFSET: Record<SyntheticKind, number> = {
  chat: 1_000_000,
  copilot: 2_000_000,
  research: 3_000_000,
  autonomous: 4_000_000,
};

export function generateSyntheticTasks(
  kind: SyntheticKind,
  ratePerS: number,
  shape: ArrivalShape,
  options: Pick<WorkloadOptions, 'seed' | 'durationMs'>,
  window: { fromMs: number; toMs: number } = { fromMs: 0, toMs: options.durationMs },
  stream = kind,
): WorkloadTask[] {
  const arrivalRng = createRng(options.seed, `arrivals:${stream}`);
  const taskRng = createRng(options.seed, `tasks:${stream}`);
  const times = generateArrivalTimes(
    arrivalRng,
    ratePerS,
    shape,
    window.fromMs,
    window.toMs,
    options.durationMs,
  );
  return times.map((startMs, index) => {
    const blueprint = BUILDERS[kind](taskRng, SESSION_OFFSET[kind] + index);
    return { id: `${stream}-${index}`, startMs, openLoop: false, ...blueprint };
  });
}

export function generateSyntheticWorkload(kind: SyntheticKind | 'mix', options: WorkloadOptions): Workload {
  const multiplier = options.rateMultiplier ?? 1;
  const kinds: SyntheticKind[] = kind === 'mix' ? ['chat', 'copilot', 'research', 'autonomous'] : [kind];
  const shape = options.shape ?? (kind === 'mix' ? 'diurnal+burst' : 'flat');
  const share = kind === 'mix' ? MIX_SHARE : 1;
  const tasks = kinds.flatMap((k) =>
    generateSyntheticTasks(k, SYNTHETIC_RATES[k] * share * multiplier, shape, options, {
      fromMs: 0,
      toMs: k === 'autonomous' ? options.durationMs * AUTONOMOUS_LAUNCH_SHARE : options.durationMs,
    }),
  );
  tasks.sort((a, b) => a.startMs - b.startMs);
  return {
    name: `synthetic-${kind}`,
    description: `synthetic ${kind === 'mix' ? 'mix of chat, copilot, research and autonomous workflows' : `${kind} workflows`} (${shape} arrivals)`,
    startEpochMs: options.startEpochMs ?? DEFAULT_START_EPOCH_MS,
    tasks,
  };
}

/** Extra autonomous agents of one tenant arriving over a window (the agentic-surge fault). */
export function generateSurgeTasks(
  options: Pick<WorkloadOptions, 'seed' | 'durationMs'>,
  window: { fromMs: number; toMs: number },
  surge: { tenant: string; tasksPerS: number; minSteps: number; maxSteps: number },
): WorkloadTask[] {
  const arrivalRng = createRng(options.seed, 'arrivals:surge');
  const taskRng = createRng(options.seed, 'tasks:surge');
  const times = generateArrivalTimes(
    arrivalRng,
    surge.tasksPerS,
    'flat',
    window.fromMs,
    window.toMs,
    options.durationMs,
  );
  return times.map((startMs, index) => ({
    id: `surge-${index}`,
    startMs,
    openLoop: false,
    ...buildAutonomous(taskRng, 5_000_000 + index, surge.tenant, [surge.minSteps, surge.maxSteps]),
  }));
}
