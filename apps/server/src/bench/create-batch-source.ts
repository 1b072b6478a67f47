import {
  createHopClassifier,
  encodeTraceRequestProtobuf,
  normalizeTraceRequest,
  type DecodedTraceRequest,
} from '@governor/otlp';
import { SPANS_PER_TRACE, syntheticTraceRequest } from '@governor/otlp/fixtures';

// Unique, pre-encoded OTLP protobuf batches for the ingest benchmark. A few templates are
// encoded once; every batch is a copy of one with fields rewritten in place, so building a batch
// costs a memcpy, not an encode:
// - trace ids: bytes 0–3 carry the batch number, 4–7 a per-run nonce, so no two spans of a run
//   (or of two runs against the same server) share a trace id;
// - task ids (conversation and workflow ids): their last 8 characters become the batch number, so
//   a task lives in one batch as it would in a real fleet, instead of gathering a copy of its
//   requests from every batch that reuses its template (which made each rollup refresh recompute
//   every task of the run);
// - span and event times: moved on by `stepNs` per batch, so event time advances as it does in
//   a real fleet rather than every batch replaying the same few seconds.

const TEMPLATES = 8;
/** Event time one batch moves on by default: 500 spans at 20,000 spans/s. */
const DEFAULT_STEP_NS_PER_SPAN = 50_000n;
/** The first batch is dated this far back, so long runs stay behind the server's clock. */
const START_BEHIND_NS = 5n * 60n * 1_000_000_000n;
// Protobuf tags of the fixed64 times: Span.start_time_unix_nano (7), end_time_unix_nano (8),
// Span.Event.time_unix_nano (1).
const TAG_SPAN_START = 0x39;
const TAG_SPAN_END = 0x41;
const TAG_EVENT_TIME = 0x09;

export interface BatchSource {
  readonly spansPerBatch: number;
  /** Batch number `index` of this run (0-based). */
  batch(index: number): Buffer;
  /** The templates, for measuring decode/normalize and the raw append rate on the same spans. */
  readonly templates: readonly Uint8Array[];
}

export interface BatchSourceOptions {
  /** Event time between two consecutive batches; default 50 µs per span. */
  stepNs?: bigint;
  /** Time of the first batch (ns); default 5 minutes before now. */
  startNs?: bigint;
}

interface Template {
  bytes: Uint8Array;
  traceIdOffsets: number[];
  taskIdOffsets: number[];
  timeOffsets: { at: number; ns: bigint }[];
}

export function createBatchSource(
  spansPerBatch: number,
  runNonce: number,
  options: BatchSourceOptions = {},
): BatchSource {
  const perBatch = Math.max(1, Math.ceil(spansPerBatch / SPANS_PER_TRACE)) * SPANS_PER_TRACE;
  const stepNs = options.stepNs ?? BigInt(perBatch) * DEFAULT_STEP_NS_PER_SPAN;
  const startNs = options.startNs ?? BigInt(Date.now()) * 1_000_000n - START_BEHIND_NS;
  const templates: Template[] = [];
  for (let t = 0; t < TEMPLATES; t++) {
    const request = syntheticTraceRequest({
      spans: spansPerBatch,
      seed: 1000 + t,
      startNs,
      idPrefix: '00000000',
    });
    const bytes = encodeTraceRequestProtobuf(request);
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const spans = request.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans));
    const traceIdOffsets = offsetsOf(
      buffer,
      [...new Set(spans.map((s) => s.traceId))].map((id) =>
        Buffer.concat([Buffer.from([0x0a, 0x10]), Buffer.from(id, 'hex')]),
      ),
      2,
    );
    const timeOffsets: Template['timeOffsets'] = [];
    const addTimes = (tag: number, values: bigint[]) => {
      for (const ns of new Set(values)) {
        const needle = Buffer.alloc(9);
        needle[0] = tag;
        needle.writeBigUInt64LE(ns, 1);
        for (const at of offsetsOf(buffer, [needle], 1)) timeOffsets.push({ at, ns });
      }
    };
    addTimes(
      TAG_SPAN_START,
      spans.map((s) => s.startNs),
    );
    addTimes(
      TAG_SPAN_END,
      spans.map((s) => s.endNs),
    );
    addTimes(
      TAG_EVENT_TIME,
      spans.flatMap((s) => s.events.map((e) => e.timeNs)),
    );
    templates.push({ bytes, traceIdOffsets, taskIdOffsets: taskIdOffsetsOf(request, buffer), timeOffsets });
  }
  return {
    spansPerBatch: perBatch,
    templates: templates.map((t) => t.bytes),
    batch(index) {
      const template = templates[index % TEMPLATES]!;
      const out = Buffer.from(template.bytes);
      for (const at of template.traceIdOffsets) {
        out.writeUInt32BE(index >>> 0, at);
        out.writeUInt32BE(runNonce >>> 0, at + 4);
      }
      const suffix = (index >>> 0).toString(16).padStart(8, '0');
      for (const at of template.taskIdOffsets) out.write(suffix, at, 'latin1');
      const shift = BigInt(index) * stepNs;
      for (const { at, ns } of template.timeOffsets) out.writeBigUInt64LE(ns + shift, at);
      return out;
    },
  };
}

/** Where each needle occurs in `buffer`, plus `skip` (the tag and length bytes before a value). */
function offsetsOf(buffer: Buffer, needles: readonly Buffer[], skip: number): number[] {
  const offsets: number[] = [];
  for (const needle of needles)
    for (let at = buffer.indexOf(needle); at !== -1; at = buffer.indexOf(needle, at + 1))
      offsets.push(at + skip);
  return offsets;
}

/**
 * Where the last 8 characters of each task, conversation and workflow id sit in the encoded
 * request. With `distinct` (the default) the ids must stay distinct once those characters are
 * replaced (checked here); without it, ids that then coincide make one task of a few requests.
 */
export function taskIdOffsetsOf(request: DecodedTraceRequest, buffer: Buffer, distinct = true): number[] {
  const rows = normalizeTraceRequest(request, { classifier: createHopClassifier(), aliases: {} }).rows;
  const traceIds = new Set(rows.map((r) => r.traceId));
  const ids = new Set<string>();
  for (const r of rows)
    for (const id of [r.taskId, r.conversationId, r.workflowId])
      if (id !== null && id.length > 8 && !traceIds.has(id)) ids.add(id);
  const prefixes = new Set([...ids].map((id) => id.slice(0, -8)));
  if (distinct && prefixes.size !== ids.size)
    throw new Error('two task ids of a bench template differ only in their last 8 characters');
  const offsets = new Set<number>();
  for (const id of ids)
    for (const at of offsetsOf(buffer, [Buffer.from(id, 'latin1')], 0)) offsets.add(at + id.length - 8);
  return [...offsets];
}
