import { type Attributes, type Span, SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';

// The spans of Governor's own traces made in apps/server: OTLP ingest batches and signal queries.
// Through @opentelemetry/api only, so everything here is a no-op until self-tracing.ts starts the SDK.

export { SELF_SERVICE_NAME } from './self-service-name.ts';

const tracer = () => trace.getTracer('@governor/server');

/** Runs `fn` inside an active span named `name`; a throw marks the span as an error and is rethrown. */
export async function withSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T>,
  kind: SpanKind = SpanKind.INTERNAL,
): Promise<T> {
  return tracer().startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

function failSpan(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message ?? String(error) });
}

/** Wall clock in ms with sub-ms precision: a span start recorded before we know whether to trace. */
function clockMs(): number {
  return performance.timeOrigin + performance.now();
}

export interface IngestBatchInfo {
  signal: 'traces' | 'metrics';
  format: 'protobuf' | 'json';
  bodyBytes: number;
}

/** What the trace needs of a decoded batch: its span count, and whether it is Governor's own. */
type Decoded = { spanCount: number; ownBatch: boolean };

export interface IngestBatchSteps<D extends Decoded, R extends { rejected: number }> {
  /** Decode and normalize the body (may throw: the batch is traced as failed). */
  decode(): Promise<D>;
  /** Append and commit, then build the export response; `traceWrite` wraps the durable write. */
  writeAndAck(decoded: D, traceWrite: <W>(write: () => Promise<W>) => Promise<W>): Promise<R>;
}

/**
 * One OTLP export request as a `governor.otlp.ingest` SERVER span with `decode` and `write` children
 * and an `ack` event when the response is ready. Whether to trace is known only after decoding:
 * a trace batch whose spans all carry service.name governor is Governor's own export (to itself or
 * to another Governor) and is not traced, or every export would make the next one. So the spans are
 * started after the fact with the recorded start times.
 */
export async function traceIngestBatch<D extends Decoded, R extends { rejected: number }>(
  info: IngestBatchInfo,
  steps: IngestBatchSteps<D, R>,
): Promise<R> {
  const startMs = clockMs();
  const attributes: Attributes = {
    'governor.otlp.signal': info.signal,
    'governor.otlp.format': info.format,
    'governor.otlp.body_bytes': info.bodyBytes,
  };
  let decoded: D;
  try {
    decoded = await steps.decode();
  } catch (error) {
    const root = tracer().startSpan('governor.otlp.ingest', {
      kind: SpanKind.SERVER,
      startTime: startMs,
      attributes,
    });
    failSpan(root, error);
    root.end();
    throw error;
  }
  const decodedMs = clockMs();
  if (decoded.ownBatch) return steps.writeAndAck(decoded, (write) => write());
  const root = tracer().startSpan('governor.otlp.ingest', {
    kind: SpanKind.SERVER,
    startTime: startMs,
    attributes: { ...attributes, 'governor.otlp.spans': decoded.spanCount },
  });
  const parent = trace.setSpan(context.active(), root);
  tracer().startSpan('decode', { startTime: startMs }, parent).end(decodedMs);
  try {
    const result = await context.with(parent, () =>
      steps.writeAndAck(decoded, (write) => withSpan('write', {}, () => write())),
    );
    root.addEvent('ack', { 'governor.otlp.rejected': result.rejected });
    return result;
  } catch (error) {
    failSpan(root, error);
    throw error;
  } finally {
    root.end();
  }
}

/**
 * Runs `fn` and records it as a span only when `describe` gives attributes for its result (or it
 * throws): for periodic work that mostly finds nothing to do, such as the 2 s rollup refresh.
 */
export async function traceIfWorked<T>(
  name: string,
  fn: () => Promise<T>,
  describe: (result: T) => Attributes | null,
): Promise<T> {
  const startMs = clockMs();
  try {
    const result = await fn();
    const attributes = describe(result);
    if (attributes) tracer().startSpan(name, { startTime: startMs, attributes }).end();
    return result;
  } catch (error) {
    const span = tracer().startSpan(name, { startTime: startMs });
    failSpan(span, error);
    span.end();
    throw error;
  }
}
