import { encodeTraceRequestProtobuf } from '@governor/otlp';
import { SPANS_PER_TRACE, syntheticTraceRequest } from '@governor/otlp/fixtures';
import { taskIdOffsetsOf } from './create-batch-source.ts';

// Pre-encoded OTLP protobuf batches whose trace ids, task ids and timestamps are rewritten in place,
// so a soak can send realistic traffic for hours at the cost of a memcpy per batch: every batch gets
// unique trace ids (bytes 0–3 batch number, 4–7 run nonce), its own task (conversation) ids (their
// last 8 characters are the batch number, as in create-batch-source.ts) and event times that follow
// the wall clock (the control loop, alerts and retention all run on event time). Without the task
// ids, the 1,000 conversations of the templates gathered a request from every 8th batch: after
// 1.2M spans each had 300 requests, and every rollup refresh recomputed nearly all of them (the
// refresh's CPU per span doubled from the first 600k spans to the next).

const TEMPLATES = 8;

interface Template {
  bytes: Uint8Array;
  traceIdOffsets: number[];
  /** Offsets of Span.start_time_unix_nano / end_time_unix_nano (fixed64) and their encoded values. */
  times: { at: number; ns: bigint }[];
  taskIdOffsets: number[];
  baseNs: bigint;
}

export interface SoakBatchSource {
  readonly spansPerBatch: number;
  /** Batch `index`, with event times moved so the template's first span starts at `startNs`. */
  batch(index: number, startNs: bigint): Buffer;
}

export function createSoakBatchSource(spansPerBatch: number, runNonce: number): SoakBatchSource {
  const baseNs = BigInt(Date.now()) * 1_000_000n;
  const templates: Template[] = [];
  for (let t = 0; t < TEMPLATES; t++) {
    const request = syntheticTraceRequest({
      spans: spansPerBatch,
      seed: 7000 + t,
      startNs: baseNs,
      idPrefix: '00000000',
    });
    const bytes = encodeTraceRequestProtobuf(request);
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const spans = request.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans));
    const traceIdOffsets: number[] = [];
    for (const traceId of new Set(spans.map((s) => s.traceId))) {
      // Span field 1, 16 bytes: tag 0x0a, length 0x10, then the id.
      const needle = Buffer.concat([Buffer.from([0x0a, 0x10]), Buffer.from(traceId, 'hex')]);
      for (let at = buffer.indexOf(needle); at !== -1; at = buffer.indexOf(needle, at + 1))
        traceIdOffsets.push(at + 2);
    }
    const times: { at: number; ns: bigint }[] = [];
    const seen = new Set<number>();
    for (const span of spans) {
      // Fields 7 and 8 are fixed64: tags 0x39 and 0x41, then 8 little-endian bytes.
      for (const [tag, ns] of [
        [0x39, span.startNs],
        [0x41, span.endNs],
      ] as const) {
        const needle = Buffer.alloc(9);
        needle[0] = tag;
        needle.writeBigUInt64LE(ns, 1);
        for (let at = buffer.indexOf(needle); at !== -1; at = buffer.indexOf(needle, at + 1)) {
          if (!seen.has(at)) {
            seen.add(at);
            times.push({ at: at + 1, ns });
          }
        }
      }
    }
    templates.push({
      bytes,
      traceIdOffsets,
      times,
      baseNs,
      // Conversation ids that then coincide within a batch are one conversation of a few requests.
      taskIdOffsets: taskIdOffsetsOf(request, buffer, false),
    });
  }
  return {
    spansPerBatch: Math.max(1, Math.ceil(spansPerBatch / SPANS_PER_TRACE)) * SPANS_PER_TRACE,
    batch(index, startNs) {
      const template = templates[index % TEMPLATES]!;
      const out = Buffer.from(template.bytes);
      for (const at of template.traceIdOffsets) {
        out.writeUInt32BE(index >>> 0, at);
        out.writeUInt32BE(runNonce >>> 0, at + 4);
      }
      const suffix = (index >>> 0).toString(16).padStart(8, '0');
      for (const at of template.taskIdOffsets) out.write(suffix, at, 'latin1');
      const shift = startNs - template.baseNs;
      for (const { at, ns } of template.times) out.writeBigUInt64LE(ns + shift, at);
      return out;
    },
  };
}
