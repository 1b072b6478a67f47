import { generateSyntheticWorkload } from './generate-synthetic-workload.ts';
import { loadAgenticCoding } from './load-agentic-sessions.ts';
import {
  loadAzureCode,
  loadAzureConv,
  loadBurstGpt1,
  loadBurstGpt3,
  loadMooncakeConversation,
  loadMooncakeSynthetic,
} from './load-trace-workloads.ts';
import type { Workload, WorkloadOptions } from './workload-types.ts';

const LOADERS = {
  'azure-conv': loadAzureConv,
  'azure-code': loadAzureCode,
  'mooncake-conversation': loadMooncakeConversation,
  'mooncake-synthetic': loadMooncakeSynthetic,
  'burstgpt-1': loadBurstGpt1,
  'burstgpt-3': loadBurstGpt3,
  'agentic-coding': loadAgenticCoding,
  'synthetic-chat': (o: WorkloadOptions) => generateSyntheticWorkload('chat', o),
  'synthetic-copilot': (o: WorkloadOptions) => generateSyntheticWorkload('copilot', o),
  'synthetic-research': (o: WorkloadOptions) => generateSyntheticWorkload('research', o),
  'synthetic-autonomous': (o: WorkloadOptions) => generateSyntheticWorkload('autonomous', o),
  'synthetic-mix': (o: WorkloadOptions) => generateSyntheticWorkload('mix', o),
} as const satisfies Record<string, (options: WorkloadOptions) => Workload>;

export type WorkloadName = keyof typeof LOADERS;

/**
 * Rate multiplier used when none is given, so that every workload loads the default fleet
 * moderately. Mooncake's traces come from a far larger cluster (≈40k prompt tokens/s) and Claude
 * Code contexts run to 128k tokens; they are thinned by default. `--rate-multiplier 1` replays
 * the native rate.
 */
export const DEFAULT_RATE_MULTIPLIERS: Partial<Record<WorkloadName, number>> = {
  'mooncake-conversation': 0.15,
  'mooncake-synthetic': 0.15,
  'agentic-coding': 0.5,
};
export const WORKLOAD_NAMES = Object.keys(LOADERS) as WorkloadName[];

export function isWorkloadName(value: string): value is WorkloadName {
  return Object.hasOwn(LOADERS, value);
}

export function createWorkload(name: WorkloadName, options: WorkloadOptions): Workload {
  const rateMultiplier = options.rateMultiplier ?? DEFAULT_RATE_MULTIPLIERS[name] ?? 1;
  return LOADERS[name]({ ...options, rateMultiplier });
}
