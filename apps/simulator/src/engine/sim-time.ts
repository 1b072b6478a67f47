import type { HrTime } from '@opentelemetry/api';

// Simulated time is kept as float milliseconds since the run's start (`simMs`); the run's start is an
// integer epoch in milliseconds. Conversions to nanoseconds split the two so no precision is lost.

export const DEFAULT_START_EPOCH_MS = Date.UTC(2024, 0, 1, 0, 0, 0);

export function toHrTime(startEpochMs: number, simMs: number): HrTime {
  const totalMs = startEpochMs + Math.floor(simMs);
  const fractionNs = Math.round((simMs - Math.floor(simMs)) * 1e6);
  let seconds = Math.floor(totalMs / 1000);
  let nanos = (totalMs - seconds * 1000) * 1e6 + fractionNs;
  if (nanos >= 1e9) {
    seconds += 1;
    nanos -= 1e9;
  }
  return [seconds, nanos];
}

/** RFC 3339 with millisecond precision in UTC, e.g. 2023-11-16T18:15:46.680Z. */
export function formatSimTime(startEpochMs: number, simMs: number): string {
  return new Date(startEpochMs + Math.floor(simMs)).toISOString();
}

/** Parses an RFC 3339 timestamp; throws with a clear message otherwise. */
export function parseRfc3339Ms(text: string): number {
  const ms = Date.parse(text);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(text) || Number.isNaN(ms)) {
    throw new Error(`invalid time "${text}": expected RFC 3339, e.g. 2024-01-01T00:00:00Z`);
  }
  return ms;
}

/** "01:02:03" for progress lines. */
export function formatClock(ms: number): string {
  const totalS = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(totalS / 3600);
  const m = Math.floor((totalS % 3600) / 60);
  const s = totalS % 60;
  return `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}`;
}
