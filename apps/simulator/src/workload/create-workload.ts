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
export const WORKLOAD_NAMES = Object.keys(LOADERS) as WorkloadName[];

export function isWorkloadName(value: string): value is WorkloadName {
  return Object.hasOwn(LOADERS, value);
}

export function createWorkload(name: WorkloadName, options: WorkloadOptions): Workload {
  return LOADERS[name](options);
}
