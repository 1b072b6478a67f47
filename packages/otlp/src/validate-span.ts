import type { DecodedSpan } from './types.ts';

const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/** Returns why a span cannot be stored, or null when it is valid. */
export function findSpanProblem(span: DecodedSpan): string | null {
  if (!TRACE_ID.test(span.traceId) || span.traceId === ZERO_TRACE) {
    return 'trace_id must be 16 non-zero bytes';
  }
  if (!SPAN_ID.test(span.spanId) || span.spanId === ZERO_SPAN) return 'span_id must be 8 non-zero bytes';
  if (span.parentSpanId !== '' && !SPAN_ID.test(span.parentSpanId))
    return 'parent_span_id must be 8 bytes or empty';
  if (span.startNs <= 0n) return 'start_time_unix_nano must be set';
  if (span.endNs < span.startNs) return 'end_time_unix_nano is before start_time_unix_nano';
  if (span.endNs > 0x7fffffffffffffffn) return 'end_time_unix_nano is out of range';
  return null;
}
