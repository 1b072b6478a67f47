import type { SignalGroup } from '@governor/conventions';
import type { AlertSignalsSource } from '../src/signals-source.ts';
import { snapshotOf } from './signal-fixtures.ts';

/**
 * Signals whose watermark and groups the test sets: event time moves only when the test says so.
 * `setGroups` decides what every snapshot answers; `snapshots` records what the engine asked for.
 */
export function createScriptedSignals(initialWatermarkNs: bigint | null = null) {
  let watermark = initialWatermarkNs;
  let groups: (windowMs: number, atNs: bigint | undefined) => SignalGroup[] = () => [];
  const snapshots: { windowMs: number; atNs: bigint | undefined }[] = [];
  const source: AlertSignalsSource = {
    watermarkNs: async () => watermark,
    snapshot: async ({ windowMs, atNs }) => {
      snapshots.push({ windowMs, atNs });
      return snapshotOf(groups(windowMs, atNs));
    },
  };
  return {
    source,
    snapshots,
    setWatermark(ns: bigint) {
      watermark = ns;
    },
    /** Fixed groups, or groups per window length and evaluation time. */
    setGroups(next: SignalGroup[] | ((windowMs: number, atNs: bigint | undefined) => SignalGroup[])) {
      groups = typeof next === 'function' ? next : () => next;
    },
  };
}
