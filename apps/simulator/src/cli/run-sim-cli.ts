import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseDurationMs } from '@governor/conventions';
import { formatClock, parseRfc3339Ms } from '../engine/sim-time.ts';
import { SCENARIO_NAMES, isScenarioName } from '../faults/fault-plan.ts';
import { parseFleetSpec } from '../fleet/fleet-spec.ts';
import { POLICY_NAMES, isPolicyName } from '../policies/create-policy.ts';
import { runSimulation } from '../run-simulation.ts';
import type { RunProgress, SimulationOptions } from '../run-simulation.ts';
import { formatSummaryTable } from '../summary/format-summary-table.ts';
import { OTLP_PROTOCOLS } from '../telemetry/create-telemetry.ts';
import type { OtlpProtocol } from '../telemetry/create-telemetry.ts';
import { WORKLOAD_NAMES, isWorkloadName } from '../workload/create-workload.ts';
import { ARRIVAL_SHAPES } from '../workload/workload-types.ts';
import type { ArrivalShape } from '../workload/workload-types.ts';

const FLAGS = {
  workload: { type: 'string' },
  scenario: { type: 'string' },
  duration: { type: 'string' },
  speed: { type: 'string' },
  seed: { type: 'string' },
  target: { type: 'string' },
  protocol: { type: 'string' },
  policy: { type: 'string' },
  lockstep: { type: 'string' },
  'control-interval': { type: 'string' },
  'metrics-interval': { type: 'string' },
  'summary-json': { type: 'string' },
  'rate-multiplier': { type: 'string' },
  'time-scale': { type: 'string' },
  shape: { type: 'string' },
  'actuator-port': { type: 'string' },
  fleet: { type: 'string' },
  'data-dir': { type: 'string' },
  start: { type: 'string' },
  'slo-ttft-ms': { type: 'string' },
  'slo-e2e-ms': { type: 'string' },
  drain: { type: 'string' },
  'fault-start': { type: 'string' },
  'fault-duration': { type: 'string' },
  'fault-target': { type: 'string' },
  'governor-attributes': { type: 'boolean' },
  quiet: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const SIM_USAGE = `Usage: governor sim [options]

Runs the seeded LLM-fleet simulator; prints a summary table (and writes JSON with --summary-json).

  --workload W          ${WORKLOAD_NAMES.join(' | ')} (default azure-conv)
  --scenario S          ${SCENARIO_NAMES.join(' | ')} (default none)
  --duration D          arrival window in simulated time, e.g. 60m, 1h30m (default 60m)
  --speed max|N         max = as fast as possible (default); N = N× real time
  --seed N              random seed (default 1)
  --target URL          OTLP/HTTP base URL (…/v1/traces, …/v1/metrics appended); omit for no telemetry
  --protocol P          http/json (default) | http/protobuf
  --policy P            ${POLICY_NAMES.join(' | ')} (default none)
  --lockstep URL        Governor base URL: flush telemetry and POST /api/control/evaluate every control interval
  --control-interval D  lockstep interval in simulated time (default 30s)
  --metrics-interval D  scrape interval of each target in simulated time (default 15s; with
                        --governor-attributes the fleet-wide gauge interval, default 10s)
  --summary-json FILE   write the run summary as JSON
  --rate-multiplier X   scale the arrival rate (default 1)
  --time-scale X        multiply trace timestamps (0.5 = twice as fast; default 1, BurstGPT 0.003)
  --shape S             synthetic arrivals: ${ARRIVAL_SHAPES.join(' | ')}
  --actuator-port N     serve POST /actions and GET /state on this port (0 = random); off by default
  --fleet FILE          fleet JSON {"pools": [{name, model, gpuType, region, replicas, …}]}
  --data-dir DIR        workload traces (default data/workloads in the repo, or GOVERNOR_DATA_DIR)
  --start TIME          RFC 3339 start for workloads without absolute time (default 2024-01-01T00:00:00Z)
  --slo-ttft-ms N       goodput TTFT SLO per request (default 2000)
  --slo-e2e-ms N        goodput end-to-end SLO per request (default 60000)
  --drain D             time in-flight tasks may finish after the window (default 10m)
  --fault-start D       fault start after run start (default 30% of duration)
  --fault-duration D    fault length (default 20% of duration, at least 5m)
  --fault-target NAME   pool, region or tenant the fault hits
  --governor-attributes emit the earlier governor.* shapes (governor.* on every span, fleet-wide
                        gauges) instead of what a Kubernetes fleet sends (the default)
  --quiet               no progress line
  -h, --help            this text
`;

class UsageError extends Error {}

function parseNumber(
  name: string,
  text: string | undefined,
  check: (v: number) => boolean,
  hint: string,
): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || !check(value))
    throw new UsageError(`--${name} ${text}: expected ${hint}`);
  return value;
}

function parseDuration(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  try {
    return parseDurationMs(text);
  } catch (error) {
    throw new UsageError(`--${name}: ${(error as Error).message}`);
  }
}

function parseChoice<T extends string>(
  name: string,
  text: string | undefined,
  valid: readonly T[],
): T | undefined {
  if (text === undefined) return undefined;
  if (!(valid as readonly string[]).includes(text))
    throw new UsageError(`--${name} "${text}" is not valid; choose one of: ${valid.join(', ')}`);
  return text as T;
}

export interface ParsedSimArgs {
  help: boolean;
  quiet: boolean;
  summaryJson: string | undefined;
  options: SimulationOptions;
}

/** Parses `governor sim` arguments (a leading "sim" is accepted); throws UsageError-like errors. */
export function parseSimArgs(argv: string[]): ParsedSimArgs {
  const args = argv[0] === 'sim' ? argv.slice(1) : argv;
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args, options: FLAGS, strict: true, allowPositionals: false }));
  } catch (error) {
    const valid = Object.keys(FLAGS)
      .map((f) => `--${f}`)
      .join(', ');
    throw new UsageError(`${(error as Error).message.split('\n')[0]}. Valid options: ${valid}`);
  }
  const str = (key: keyof typeof FLAGS) => values[key] as string | undefined;
  const workloadText = str('workload') ?? 'azure-conv';
  if (!isWorkloadName(workloadText))
    throw new UsageError(`unknown workload "${workloadText}"; choose one of: ${WORKLOAD_NAMES.join(', ')}`);
  const scenarioText = str('scenario') ?? 'none';
  if (!isScenarioName(scenarioText))
    throw new UsageError(`unknown scenario "${scenarioText}"; choose one of: ${SCENARIO_NAMES.join(', ')}`);
  const policyText = str('policy') ?? 'none';
  if (!isPolicyName(policyText))
    throw new UsageError(`unknown policy "${policyText}"; choose one of: ${POLICY_NAMES.join(', ')}`);
  const speedText = str('speed') ?? 'max';
  const speed =
    speedText === 'max' ? 'max' : parseNumber('speed', speedText, (v) => v > 0, '"max" or a number > 0');
  const protocol = parseChoice<OtlpProtocol>('protocol', str('protocol'), OTLP_PROTOCOLS);
  const shape = parseChoice<ArrivalShape>('shape', str('shape'), ARRIVAL_SHAPES);
  let startEpochMs: number | undefined;
  if (str('start') !== undefined) {
    try {
      startEpochMs = parseRfc3339Ms(str('start')!);
    } catch (error) {
      throw new UsageError(`--start: ${(error as Error).message}`);
    }
  }
  let fleet: SimulationOptions['fleet'];
  const fleetPath = str('fleet');
  if (fleetPath) {
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(fleetPath, 'utf8'));
    } catch (error) {
      throw new UsageError(`--fleet ${fleetPath}: ${(error as Error).message}`);
    }
    try {
      fleet = parseFleetSpec(raw);
    } catch (error) {
      throw new UsageError(`--fleet ${fleetPath}: ${(error as Error).message}`);
    }
  }
  const urlOption = (name: 'target' | 'lockstep') => {
    const text = str(name);
    if (text === undefined) return undefined;
    if (!/^https?:\/\/[^\s]+$/.test(text))
      throw new UsageError(`--${name} "${text}": expected an http(s) URL such as http://127.0.0.1:4318`);
    return text;
  };
  const options: SimulationOptions = {
    workload: workloadText,
    scenario: scenarioText,
    policy: policyText,
    speed: speed as SimulationOptions['speed'],
  };
  const set = <K extends keyof SimulationOptions>(key: K, value: SimulationOptions[K] | undefined) => {
    if (value !== undefined) options[key] = value;
  };
  set('durationMs', parseDuration('duration', str('duration')));
  set('seed', parseNumber('seed', str('seed'), Number.isInteger, 'an integer'));
  set('target', urlOption('target'));
  set('lockstep', urlOption('lockstep'));
  set('protocol', protocol);
  set('controlIntervalMs', parseDuration('control-interval', str('control-interval')));
  set('metricsIntervalMs', parseDuration('metrics-interval', str('metrics-interval')));
  set(
    'rateMultiplier',
    parseNumber('rate-multiplier', str('rate-multiplier'), (v) => v > 0, 'a number > 0'),
  );
  set(
    'timeScale',
    parseNumber('time-scale', str('time-scale'), (v) => v > 0, 'a number > 0'),
  );
  set('shape', shape);
  set(
    'actuatorPort',
    parseNumber(
      'actuator-port',
      str('actuator-port'),
      (v) => Number.isInteger(v) && v >= 0 && v < 65536,
      'a port 0–65535',
    ),
  );
  set('fleet', fleet);
  set('dataDir', str('data-dir'));
  set('startEpochMs', startEpochMs);
  set(
    'sloTtftMs',
    parseNumber('slo-ttft-ms', str('slo-ttft-ms'), (v) => v > 0, 'a number > 0'),
  );
  set(
    'sloE2eMs',
    parseNumber('slo-e2e-ms', str('slo-e2e-ms'), (v) => v > 0, 'a number > 0'),
  );
  set('drainMs', parseDuration('drain', str('drain')));
  set('faultStartMs', parseDuration('fault-start', str('fault-start')));
  set('faultDurationMs', parseDuration('fault-duration', str('fault-duration')));
  set('faultTarget', str('fault-target'));
  if (values['governor-attributes'] === true) options.governorAttributes = true;
  for (const key of ['durationMs', 'controlIntervalMs', 'metricsIntervalMs'] as const) {
    if (options[key] !== undefined && options[key]! <= 0)
      throw new UsageError(`--${key.replace(/Ms$/, '')} must be > 0`);
  }
  return {
    help: values.help === true,
    quiet: values.quiet === true,
    summaryJson: str('summary-json'),
    options,
  };
}

function formatProgress(p: RunProgress): string {
  const spans =
    p.spansEmitted > 0
      ? `  spans ${p.spansExported.toLocaleString('en-US')}/${p.spansEmitted.toLocaleString('en-US')} exported`
      : '';
  return `sim ${p.simTime} (${formatClock(p.simMs)} of ${formatClock(p.durationMs)})  requests ${p.requests.toLocaleString('en-US')}${spans}  wall ${(p.wallMs / 1000).toFixed(1)}s`;
}

/**
 * Entry point of `governor sim`: parses `argv` (the arguments after `sim`), runs, prints the
 * summary and returns the exit code (0 ok, 1 run failed, 2 bad usage).
 */
export async function runSimCli(argv: string[]): Promise<number> {
  let parsed: ParsedSimArgs;
  try {
    parsed = parseSimArgs(argv);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`governor sim: ${error.message}\nRun "governor sim --help" for usage.\n`);
      return 2;
    }
    throw error;
  }
  if (parsed.help) {
    process.stdout.write(SIM_USAGE);
    return 0;
  }
  const tty = process.stderr.isTTY === true;
  let lastPrinted = 0;
  let progressShown = false;
  const options: SimulationOptions = {
    ...parsed.options,
    onActuatorListening: (url) =>
      process.stdout.write(`actuator listening on ${url} (POST /actions, GET /state)\n`),
  };
  if (!parsed.quiet) {
    options.onProgress = (p) => {
      if (!tty && p.wallMs - lastPrinted < 5000) return;
      lastPrinted = p.wallMs;
      progressShown = true;
      process.stderr.write(tty ? `\r${formatProgress(p)}\x1b[K` : `${formatProgress(p)}\n`);
    };
  }
  const startedAt = performance.now();
  try {
    const summary = await runSimulation(options);
    const wallS = (performance.now() - startedAt) / 1000;
    if (progressShown && tty) process.stderr.write('\r\x1b[K');
    process.stdout.write(`${formatSummaryTable(summary)}\n\nwall time ${wallS.toFixed(2)} s\n`);
    if (parsed.summaryJson) writeFileSync(parsed.summaryJson, `${JSON.stringify(summary, null, 2)}\n`);
    return 0;
  } catch (error) {
    if (progressShown && tty) process.stderr.write('\n');
    process.stderr.write(`governor sim: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
