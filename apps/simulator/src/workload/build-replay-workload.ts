import { createRng } from '../engine/random.ts';
import type { Rng } from '../engine/random.ts';
import type { Workload, WorkloadOptions, WorkloadStep, WorkloadTask } from './workload-types.ts';

/** A task as read from a trace, before time scaling, looping and rate multiplication. */
export interface TraceTask {
  /** ms since the trace's first arrival. */
  offsetMs: number;
  model?: string;
  conversationId?: string;
  /** Steps with offsets relative to the task's own start. */
  steps: WorkloadStep[];
}

export interface ReplaySpec {
  name: string;
  description: string;
  startEpochMs: number;
  traceTasks: TraceTask[];
  /** Model of tasks whose trace row names none: weighted choice per task. */
  modelMix: ReadonlyArray<readonly [model: string, weight: number]>;
  defaultTimeScale?: number;
}

/** Tenants for traces that carry none, with the priorities shedding acts on. */
const REPLAY_TENANTS: ReadonlyArray<readonly [tenant: string, priority: number, weight: number]> = [
  ['interactive', 2, 0.6],
  ['internal', 1, 0.25],
  ['batch', 0, 0.15],
];

export function pickWeighted<T>(choices: ReadonlyArray<readonly [T, number]>, u: number): T {
  const total = choices.reduce((sum, [, w]) => sum + w, 0);
  let x = u * total;
  for (const [value, weight] of choices) {
    if (x < weight) return value;
    x -= weight;
  }
  return choices[choices.length - 1]![0];
}

/**
 * Turns trace tasks into a run's workload: offsets × time scale, the trace looped until the
 * duration is filled, each task copied ⌊m⌋ times plus once more with probability frac(m) for a rate
 * multiplier m (copies shifted by up to 2 s so they do not arrive in lockstep).
 */
export function buildReplayWorkload(spec: ReplaySpec, options: WorkloadOptions): Workload {
  const rng = createRng(options.seed, `workload:${spec.name}`);
  const timeScale = options.timeScale ?? spec.defaultTimeScale ?? 1;
  const multiplier = options.rateMultiplier ?? 1;
  const source = spec.traceTasks;
  if (source.length === 0) throw new Error(`${spec.name}: the trace has no usable rows`);
  const lastOffsetMs = source[source.length - 1]!.offsetMs;
  const meanGapMs = source.length > 1 ? lastOffsetMs / (source.length - 1) : 1000;
  const loopPeriodMs = (lastOffsetMs + meanGapMs) * timeScale;
  const tasks: WorkloadTask[] = [];
  let serial = 0;
  for (let loop = 0; loop * loopPeriodMs < options.durationMs; loop++) {
    for (const traceTask of source) {
      const baseStartMs = loop * loopPeriodMs + traceTask.offsetMs * timeScale;
      if (baseStartMs >= options.durationMs) break;
      const copies = Math.floor(multiplier) + (rng.chance(multiplier - Math.floor(multiplier)) ? 1 : 0);
      for (let copy = 0; copy < copies; copy++) {
        const startMs = copy === 0 ? baseStartMs : baseStartMs + rng.uniform(0, 2000);
        if (startMs >= options.durationMs) continue;
        tasks.push(createReplayTask(spec, traceTask, startMs, timeScale, serial++, loop, copy, rng));
      }
    }
  }
  tasks.sort((a, b) => a.startMs - b.startMs);
  return {
    name: spec.name,
    description: spec.description,
    startEpochMs: options.startEpochMs ?? spec.startEpochMs,
    tasks,
  };
}

function createReplayTask(
  spec: ReplaySpec,
  traceTask: TraceTask,
  startMs: number,
  timeScale: number,
  serial: number,
  loop: number,
  copy: number,
  rng: Rng,
): WorkloadTask {
  const [tenant, priority] = pickWeighted(
    REPLAY_TENANTS.map(([t, p, w]) => [[t, p] as const, w] as const),
    rng.next(),
  );
  const model = traceTask.model ?? pickWeighted(spec.modelMix, rng.next());
  const suffix = loop === 0 && copy === 0 ? '' : `-l${loop}c${copy}`;
  const baseId = traceTask.conversationId ?? `${spec.name}-${serial}`;
  const steps = traceTask.steps.map((step) => ({
    ...step,
    ...(step.atOffsetMs !== undefined ? { atOffsetMs: step.atOffsetMs * timeScale } : {}),
  }));
  const task: WorkloadTask = {
    id: `${baseId}${suffix}`,
    startMs,
    type: 'replay',
    tenant,
    priority,
    model,
    steps,
    openLoop: true,
  };
  if (traceTask.conversationId) task.conversationId = `${traceTask.conversationId}${suffix}`;
  return task;
}
