import type { GroupDimension, SignalsSnapshot } from '@governor/conventions';

/**
 * The part of `Signals` the control loop reads. Structural, so the real `Signals`
 * satisfies it and replay can hand in the same object over a stored history.
 */
export interface SignalsReader {
  /** Newest event time − lateness; null when nothing has been ingested. */
  watermarkNs(): Promise<bigint | null>;
  /** Where the store's telemetry begins (earliest span start); null when it holds no spans. */
  oldestEventNs(): Promise<bigint | null>;
  snapshot(query: SnapshotQuery): Promise<SignalsSnapshot>;
}

export interface SnapshotQuery {
  windowMs: number;
  by: GroupDimension[];
  /** End of the window (event time); defaults to the watermark. */
  atNs?: bigint;
  /** Request counts and rates only: no percentiles, no pool gauges (`Signals.snapshot`'s countsOnly). */
  countsOnly?: boolean;
}
