import { encodeTraceRequestProtobuf } from '@governor/otlp';
import { SPANS_PER_TRACE, syntheticTraceRequest } from '@governor/otlp/fixtures';

// Unique, pre-encoded OTLP protobuf batches for the ingest benchmark. A few templates are
// encoded once; every batch is a copy of one with its trace ids rewritten in place — bytes 0–3
// carry the batch number, 4–7 a per-run nonce — so no two spans of a run (or of two runs against
// the same server) share a trace id, and building a batch costs a memcpy, not an encode.

const TEMPLATES = 8;

export interface BatchSource {
  readonly spansPerBatch: number;
  /** Batch number `index` of this run (0-based). */
  batch(index: number): Buffer;
  /** The templates, for measuring decode/normalize and the raw append rate on the same spans. */
  readonly templates: readonly Uint8Array[];
}

export function createBatchSource(spansPerBatch: number, runNonce: number): BatchSource {
  const templates: { bytes: Uint8Array; traceIdOffsets: number[] }[] = [];
  for (let t = 0; t < TEMPLATES; t++) {
    const request = syntheticTraceRequest({
      spans: spansPerBatch,
      seed: 1000 + t,
      startNs: BigInt(Date.now()) * 1_000_000n,
      idPrefix: '00000000',
    });
    const bytes = encodeTraceRequestProtobuf(request);
    const traceIds = new Set(
      request.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans.map((s) => s.traceId))),
    );
    const traceIdOffsets: number[] = [];
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (const traceId of traceIds) {
      // Field 1 of Span, 16 bytes: tag 0x0a, length 0x10, then the id.
      const needle = Buffer.concat([Buffer.from([0x0a, 0x10]), Buffer.from(traceId, 'hex')]);
      for (let at = buffer.indexOf(needle); at !== -1; at = buffer.indexOf(needle, at + 1))
        traceIdOffsets.push(at + 2);
    }
    templates.push({ bytes, traceIdOffsets });
  }
  return {
    spansPerBatch: Math.max(1, Math.ceil(spansPerBatch / SPANS_PER_TRACE)) * SPANS_PER_TRACE,
    templates: templates.map((t) => t.bytes),
    batch(index) {
      const template = templates[index % TEMPLATES]!;
      const out = Buffer.from(template.bytes);
      for (const at of template.traceIdOffsets) {
        out.writeUInt32BE(index >>> 0, at);
        out.writeUInt32BE(runNonce >>> 0, at + 4);
      }
      return out;
    },
  };
}
