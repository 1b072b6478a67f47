import type { TraceSpan } from '../api/traces.ts';

export interface SpanRow {
  span: TraceSpan;
  depth: number;
  /** Offset from the trace start, ms. */
  offsetMs: number;
}

/**
 * Orders spans as a tree (parents before children, siblings by start time) for the waterfall.
 * Spans whose parent is missing (not yet arrived, or sampled out) are shown at the top level.
 */
export function buildSpanTree(spans: TraceSpan[]): { rows: SpanRow[]; startMs: number; totalMs: number } {
  if (spans.length === 0) return { rows: [], startMs: 0, totalMs: 0 };
  const startMs = Math.min(...spans.map((s) => s.startMs));
  const endMs = Math.max(...spans.map((s) => s.startMs + s.durationMs));
  const ids = new Set(spans.map((s) => s.spanId));
  const children = new Map<string, TraceSpan[]>();
  const roots: TraceSpan[] = [];
  for (const span of spans) {
    if (span.parentSpanId && ids.has(span.parentSpanId) && span.parentSpanId !== span.spanId) {
      const list = children.get(span.parentSpanId) ?? [];
      list.push(span);
      children.set(span.parentSpanId, list);
    } else {
      roots.push(span);
    }
  }
  const byStart = (a: TraceSpan, b: TraceSpan) => a.startMs - b.startMs || a.name.localeCompare(b.name);
  const rows: SpanRow[] = [];
  const seen = new Set<string>();
  const visit = (span: TraceSpan, depth: number) => {
    if (seen.has(span.spanId)) return;
    seen.add(span.spanId);
    rows.push({ span, depth, offsetMs: span.startMs - startMs });
    for (const child of (children.get(span.spanId) ?? []).sort(byStart)) visit(child, depth + 1);
  };
  for (const root of roots.sort(byStart)) visit(root, 0);
  return { rows, startMs, totalMs: Math.max(endMs - startMs, 0.001) };
}
