import { ProtobufWriter } from './protobuf-writer.ts';
import { writeAttributes } from './encode-attributes.ts';
import type { DecodedSpan, DecodedTraceRequest } from './types.ts';

// Encodes an ExportTraceServiceRequest. Used to build fixtures (what vLLM, SGLang and llm-d send)
// and the ingest benchmark's pre-encoded batches; the server itself only decodes.

export function encodeTraceRequestProtobuf(request: DecodedTraceRequest): Uint8Array {
  const w = new ProtobufWriter();
  for (const rs of request.resourceSpans) {
    w.message(1, (rsw) => {
      rsw.message(1, (res) => writeAttributes(res, 1, rs.resource));
      for (const ss of rs.scopeSpans) {
        rsw.message(2, (ssw) => {
          ssw.message(1, (sc) => sc.string(1, ss.scope.name).string(2, ss.scope.version));
          for (const span of ss.spans) ssw.message(2, (sw) => writeSpan(sw, span));
        });
      }
    });
  }
  return w.bytesOut();
}

function writeSpan(w: ProtobufWriter, span: DecodedSpan): void {
  w.bytes(1, Buffer.from(span.traceId, 'hex'))
    .bytes(2, Buffer.from(span.spanId, 'hex'))
    .string(3, span.traceState)
    .bytes(4, Buffer.from(span.parentSpanId, 'hex'))
    .string(5, span.name)
    .uint(6, span.kind)
    .fixed64(7, span.startNs)
    .fixed64(8, span.endNs);
  writeAttributes(w, 9, span.attributes);
  for (const event of span.events) {
    w.message(11, (ew) => {
      ew.fixed64(1, event.timeNs).string(2, event.name);
      writeAttributes(ew, 3, event.attributes);
    });
  }
  if (span.statusCode !== 0 || span.statusMessage !== '') {
    w.message(15, (st) => st.string(2, span.statusMessage).uint(3, span.statusCode));
  }
}
