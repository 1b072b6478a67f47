import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { createActionApplier } from './control/apply-control-action.ts';
import { startActuatorServer } from './control/actuator-server.ts';
import type { ActuatorServer } from './control/actuator-server.ts';
import { requestEvaluate } from './control/request-evaluate.ts';
import { formatSimTime } from './engine/sim-time.ts';
import { FAULT_PARAMS, planScenario } from './faults/fault-plan.ts';
import type { FaultSpec, ScenarioName } from './faults/fault-plan.ts';
import { createDefaultFleet } from './fleet/fleet-spec.ts';
import type { FleetSpec } from './fleet/fleet-spec.ts';
import { DEFAULT_ORACLE_TARGET_UTILIZATION, applyPolicy } from './policies/create-policy.ts';
import type { PolicyName } from './policies/create-policy.ts';
import { Simulation } from './sim/simulation.ts';
import type { RunSummary, LockstepSummary } from './summary/run-summary.ts';
import { summarizeRun } from './summary/summarize-run.ts';
import { createTelemetry } from './telemetry/create-telemetry.ts';
import type { OtlpProtocol, Telemetry } from './telemetry/create-telemetry.ts';
import { createWorkload } from './workload/create-workload.ts';
import type { WorkloadName } from './workload/create-workload.ts';
import { generateSurgeTasks } from './workload/generate-synthetic-workload.ts';
import { resolveDataDir } from './workload/read-data-file.ts';
import type { ArrivalShape, Workload } from './workload/workload-types.ts';

export interface SimulationOptions {
  workload: WorkloadName;
  scenario?: ScenarioName;
  /** Arrival window in simulated ms (default 1 h). */
  durationMs?: number;
  seed?: number;
  /** 'max' runs as fast as possible; N runs N× real time. */
  speed?: 'max' | number;
  /** OTLP/HTTP base URL; omit (or null) to run without telemetry. */
  target?: string | null;
  protocol?: OtlpProtocol;
  policy?: PolicyName;
  /** Governor base URL for lockstep control (POST {url}/api/control/evaluate every control interval). */
  lockstep?: string | null;
  controlIntervalMs?: number;
  /** Scrape interval of every target (default 15 s); with governorAttributes, the gauge interval (default 10 s). */
  metricsIntervalMs?: number;
  /**
   * Emit the simulator's earlier shapes (governor.* attributes on every span, fleet-wide gauges)
   * instead of what a Kubernetes fleet sends through an OpenTelemetry Collector.
   */
  governorAttributes?: boolean;
  rateMultiplier?: number;
  timeScale?: number;
  shape?: ArrivalShape;
  dataDir?: string;
  fleet?: FleetSpec;
  /** Start the actuator endpoint on this port (0 = random). Omit to leave it off. */
  actuatorPort?: number | null;
  actuatorHost?: string;
  /** Epoch ms of sim time 0 for workloads without absolute time. */
  startEpochMs?: number;
  sloTtftMs?: number;
  sloE2eMs?: number;
  /** How long in-flight tasks may continue after the arrival window (default 10 min). */
  drainMs?: number;
  faultStartMs?: number;
  faultDurationMs?: number;
  faultTarget?: string;
  reversalWindowMs?: number;
  /** With policy `oracle`: the share of each replica its schedule plans to use (default 0.7). */
  oracleTargetUtilization?: number;
  /** With policy `oracle`: the span its load is averaged over before sizing (default one control interval). */
  oracleSmoothingMs?: number;
  onProgress?: (progress: RunProgress) => void;
  onActuatorListening?: (url: string) => void;
  /** Warnings and lockstep errors (default: stderr). */
  log?: (line: string) => void;
}

export interface RunProgress {
  simTime: string;
  simMs: number;
  durationMs: number;
  requests: number;
  spansEmitted: number;
  spansExported: number;
  wallMs: number;
}

const EVENTS_PER_SLICE = 20_000;
/**
 * With telemetry on, back-pressure is checked this often: a slice emits at most a few thousand
 * spans, so a forced flush never needs more concurrent exports than the exporter allows.
 */
const EVENTS_PER_SLICE_WITH_TELEMETRY = 4000;
const PROGRESS_EVERY_MS = 1000;

/** What a run is made of before any policy acts: its workload (surge tasks merged), fleet and faults. */
export interface PreparedRun {
  seed: number;
  durationMs: number;
  drainMs: number;
  scenario: ScenarioName;
  workload: Workload;
  fleet: FleetSpec;
  faults: FaultSpec[];
}

/** Builds a run's workload, fleet (a copy) and fault plan from its options, as `runSimulation` does. */
export function prepareRun(options: SimulationOptions): PreparedRun {
  const seed = options.seed ?? 1;
  const durationMs = options.durationMs ?? 3_600_000;
  const scenario = options.scenario ?? 'none';
  const workload = createWorkload(options.workload, {
    seed,
    durationMs,
    dataDir: resolveDataDir(options.dataDir),
    ...(options.timeScale !== undefined ? { timeScale: options.timeScale } : {}),
    ...(options.rateMultiplier !== undefined ? { rateMultiplier: options.rateMultiplier } : {}),
    ...(options.startEpochMs !== undefined ? { startEpochMs: options.startEpochMs } : {}),
    ...(options.shape !== undefined ? { shape: options.shape } : {}),
  });
  const fleet: FleetSpec = structuredClone(options.fleet ?? createDefaultFleet());
  const faults = planScenario(scenario, fleet, {
    durationMs,
    ...(options.faultStartMs !== undefined ? { faultStartMs: options.faultStartMs } : {}),
    ...(options.faultDurationMs !== undefined ? { faultDurationMs: options.faultDurationMs } : {}),
    ...(options.faultTarget !== undefined ? { faultTarget: options.faultTarget } : {}),
  });
  for (const fault of faults) {
    if (fault.kind !== 'agentic-surge') continue;
    const surge = generateSurgeTasks(
      { seed, durationMs },
      { fromMs: fault.startMs, toMs: Math.min(fault.endMs, durationMs) },
      {
        tenant: fault.target.tenant!,
        tasksPerS: fault.params.tasksPerS ?? FAULT_PARAMS.agenticSurge.tasksPerS,
        minSteps: fault.params.minSteps ?? FAULT_PARAMS.agenticSurge.minSteps,
        maxSteps: fault.params.maxSteps ?? FAULT_PARAMS.agenticSurge.maxSteps,
      },
    );
    workload.tasks = [...workload.tasks, ...surge].sort((a, b) => a.startMs - b.startMs);
  }
  const drainMs = options.drainMs ?? 600_000;
  return { seed, durationMs, drainMs, scenario, workload, fleet, faults };
}

/** The hindsight oracle's sizing options of a run (with policy `oracle`). */
export function resolveOracleOptions(options: SimulationOptions): {
  intervalMs: number;
  targetUtilization: number;
  smoothingIntervals: number;
} {
  const intervalMs = options.controlIntervalMs ?? 30_000;
  return {
    intervalMs,
    targetUtilization: options.oracleTargetUtilization ?? DEFAULT_ORACLE_TARGET_UTILIZATION,
    smoothingIntervals: Math.max(1, Math.round((options.oracleSmoothingMs ?? 0) / intervalMs)),
  };
}

/**
 * Runs one simulation to the end and returns its summary. Without `target` (and without
 * `lockstep`) no telemetry is produced, which is the fast path for baseline sweeps.
 */
export async function runSimulation(options: SimulationOptions): Promise<RunSummary> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const { seed, durationMs, drainMs, scenario, workload, fleet, faults } = prepareRun(options);
  const policy = options.policy ?? 'none';
  const autoscaler = applyPolicy(policy, fleet, workload, {
    durationMs,
    drainMs,
    faults,
    oracle: resolveOracleOptions(options),
  });

  const lockstepUrl = options.lockstep ?? null;
  // Governor serves OTLP and its API on one port, so lockstep defaults the telemetry target to it.
  const target = options.target ?? lockstepUrl;
  const protocol = options.protocol ?? 'http/json';
  const telemetry: Telemetry | null = target
    ? createTelemetry({
        target,
        protocol,
        seed,
        startEpochMs: workload.startEpochMs,
        shapes: options.governorAttributes ? 'governor' : 'real',
      })
    : null;

  const sim = new Simulation({
    seed,
    workload,
    fleet,
    durationMs,
    drainMs,
    faults,
    metricsIntervalMs: options.governorAttributes ? (options.metricsIntervalMs ?? 10_000) : 0,
    scrapeIntervalMs: options.governorAttributes ? 0 : (options.metricsIntervalMs ?? 15_000),
    controlIntervalMs: lockstepUrl ? (options.controlIntervalMs ?? 30_000) : 0,
    autoscaler,
    sink: telemetry,
    sloTtftMs: options.sloTtftMs ?? 2000,
    sloE2eMs: options.sloE2eMs ?? 60_000,
    reversalWindowMs: options.reversalWindowMs ?? 300_000,
  });
  const applier = createActionApplier(sim);
  let actuator: ActuatorServer | null = null;
  if (options.actuatorPort !== undefined && options.actuatorPort !== null) {
    actuator = await startActuatorServer(sim, applier, {
      port: options.actuatorPort,
      ...(options.actuatorHost ? { host: options.actuatorHost } : {}),
    });
    options.onActuatorListening?.(actuator.url);
  }

  const lockstep: LockstepSummary | null = lockstepUrl
    ? { url: lockstepUrl, calls: 0, failures: 0, actionsReceived: 0, actionsApplied: 0, lastError: null }
    : null;
  const runLockstepTick = async () => {
    if (!lockstep || !lockstepUrl) return;
    const at = formatSimTime(sim.startEpochMs, sim.nowMs);
    if (telemetry) await telemetry.flush();
    lockstep.calls += 1;
    try {
      const actions = await requestEvaluate(lockstepUrl, at);
      lockstep.actionsReceived += actions.length;
      for (const action of actions) {
        const result = applier.apply(action, 'lockstep');
        if (result.status === 'applied') lockstep.actionsApplied += 1;
        else if (result.status === 'rejected')
          log(`lockstep: action ${action.id} (${action.kind}) rejected at ${at}: ${result.message}`);
      }
    } catch (error) {
      lockstep.failures += 1;
      lockstep.lastError = error instanceof Error ? error.message : String(error);
      if (lockstep.failures <= 3 || lockstep.failures % 20 === 0) {
        log(
          `lockstep: evaluate at ${at} failed (${lockstep.failures} so far), continuing without actions: ${lockstep.lastError}`,
        );
      }
    }
  };

  const wallStart = performance.now();
  let lastProgress = wallStart;
  const speed = options.speed ?? 'max';
  let warnedExport = false;
  try {
    while (!sim.finished) {
      const limitMs = speed === 'max' ? Number.POSITIVE_INFINITY : (performance.now() - wallStart) * speed;
      const result = sim.runUntil(limitMs, telemetry ? EVENTS_PER_SLICE_WITH_TELEMETRY : EVENTS_PER_SLICE);
      if (result === 'control') await runLockstepTick();
      if (telemetry?.needsFlush()) await telemetry.relievePressure();
      if (telemetry && !warnedExport && telemetry.stats.lastExportError) {
        warnedExport = true;
        log(
          `telemetry: export to ${target} failing (${telemetry.stats.lastExportError}); the run continues and counts failed spans`,
        );
      }
      const now = performance.now();
      if (options.onProgress && now - lastProgress >= PROGRESS_EVERY_MS) {
        lastProgress = now;
        options.onProgress({
          simTime: formatSimTime(sim.startEpochMs, sim.nowMs),
          simMs: sim.nowMs,
          durationMs,
          requests: sim.requests,
          spansEmitted: telemetry?.stats.spansEmitted ?? 0,
          spansExported: telemetry?.stats.spansExported ?? 0,
          wallMs: now - wallStart,
        });
      }
      if (speed !== 'max' && result === 'limit') {
        const waitMs = Math.min(50, Math.max(1, (sim.nextEventTimeMs - sim.nowMs) / speed));
        await new Promise((resolve) => setTimeout(resolve, waitMs));
      } else if (actuator || telemetry || result === 'control') {
        await yieldToEventLoop();
      }
    }
    if (telemetry) await telemetry.shutdown();
  } finally {
    if (actuator) await actuator.close();
  }
  return summarizeRun(sim, {
    workload: options.workload,
    scenario,
    policy,
    faults,
    telemetry: telemetry && target ? { target, protocol, ...telemetry.stats } : null,
    lockstep,
  });
}
