import type { GroupDimension, SignalGroup, SignalsSnapshot } from '@governor/conventions';

/** What alerting needs from @governor/signals (structural, so tests can drive evaluation directly). */
export interface AlertSignalsSource {
  /** Newest event time − lateness; null before any data arrived. */
  watermarkNs(): Promise<bigint | null>;
  snapshot(query: { windowMs: number; by: GroupDimension[]; atNs?: bigint }): Promise<SignalsSnapshot>;
}

/** Reads a dotted signal such as `ttftMs.p95` from one group; null when the group has no data for it. */
export type ReadSignalValue = (group: SignalGroup, signal: string) => number | null;
