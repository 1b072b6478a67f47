import type { SignalGroup } from '@governor/conventions';

/**
 * Reads a signal by its dotted path into a SignalGroup — `ttftMs.p95`, `errorRate`,
 * `hops.queue.p95`, `successPerDollar`… — as a number, or null when the group has no value there
 * (no data, or not a numeric field).
 */
export function readSignalValue(group: SignalGroup, path: string): number | null {
  let current: unknown = group;
  for (const part of path.split('.')) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, part)) return null;
    current = (current as Record<string, unknown>)[part];
  }
  return typeof current === 'number' && Number.isFinite(current) ? current : null;
}
