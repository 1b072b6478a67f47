import { ProtobufWriter } from './protobuf-writer.ts';

// Response bodies of the OTLP collector services, in protobuf and JSON form.

export interface ExportResult {
  signal: 'traces' | 'metrics';
  rejected: number;
  errorMessage: string;
}

export function encodeExportResponseProtobuf(result: ExportResult): Uint8Array {
  const w = new ProtobufWriter();
  if (result.rejected > 0 || result.errorMessage !== '') {
    w.message(1, (p) => p.uint(1, result.rejected).string(2, result.errorMessage));
  }
  return w.bytesOut();
}

export function encodeExportResponseJson(result: ExportResult): string {
  if (result.rejected === 0 && result.errorMessage === '') return '{}';
  const key = result.signal === 'traces' ? 'rejectedSpans' : 'rejectedDataPoints';
  return JSON.stringify({
    partialSuccess: { [key]: String(result.rejected), errorMessage: result.errorMessage },
  });
}

/** google.rpc.Status, the body OTLP requires for 4xx/5xx answers. Codes are gRPC codes. */
export function encodeRpcStatusProtobuf(code: number, message: string): Uint8Array {
  return new ProtobufWriter().uint(1, code).string(2, message).bytesOut();
}

export function encodeRpcStatusJson(code: number, message: string): string {
  return JSON.stringify({ code, message, details: [] });
}
