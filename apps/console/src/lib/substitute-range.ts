import { toNsLiteral } from './time-range.ts';

// Dashboards' and the SQL console's placeholders for the selected range: $from_ns and $to_ns
// (BIGINT nanoseconds, for start_ns/end_ns/time_ns) and $step_s (bucket width in seconds).
// Only numbers are substituted, so the result is as safe as the text the user typed.

export function substituteRange(
  sql: string,
  range: { fromMs: number; toMs: number; stepMs: number },
): string {
  return sql
    .replace(/\$from_ns\b/g, toNsLiteral(range.fromMs))
    .replace(/\$to_ns\b/g, toNsLiteral(range.toMs))
    .replace(/\$step_s\b/g, String(Math.max(1, Math.round(range.stepMs / 1000))));
}
