// The google.rpc.Code an OTLP error carries, for the HTTP status Governor answers with. One table
// for both receivers: the OTLP/HTTP google.rpc.Status body and the OTLP/gRPC call status agree.
// Codes follow google/rpc/code.proto's HTTP mapping (400 INVALID_ARGUMENT, 401 UNAUTHENTICATED,
// 403 PERMISSION_DENIED, 429 RESOURCE_EXHAUSTED, 503 UNAVAILABLE…). 413 is RESOURCE_EXHAUSTED, what
// gRPC itself answers for a message over the size cap; 415 is INVALID_ARGUMENT (the request's
// encoding is the client's mistake). Retryability stays with the HTTP status (429/502/503/504).

import type { GovernorError } from '../errors.ts';

export const GrpcCode = {
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  ABORTED: 10,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

const CODE_FOR_STATUS: Readonly<Record<number, number>> = {
  400: GrpcCode.INVALID_ARGUMENT,
  401: GrpcCode.UNAUTHENTICATED,
  403: GrpcCode.PERMISSION_DENIED,
  404: GrpcCode.NOT_FOUND,
  408: GrpcCode.DEADLINE_EXCEEDED,
  409: GrpcCode.ABORTED,
  413: GrpcCode.RESOURCE_EXHAUSTED,
  415: GrpcCode.INVALID_ARGUMENT,
  429: GrpcCode.RESOURCE_EXHAUSTED,
  499: GrpcCode.CANCELLED,
  500: GrpcCode.INTERNAL,
  501: GrpcCode.UNIMPLEMENTED,
  502: GrpcCode.UNAVAILABLE,
  503: GrpcCode.UNAVAILABLE,
  504: GrpcCode.DEADLINE_EXCEEDED,
};

/** The gRPC status code for an HTTP error status; UNKNOWN for one the mapping does not name. */
export function grpcCodeForHttpStatus(status: number): number {
  return CODE_FOR_STATUS[status] ?? GrpcCode.UNKNOWN;
}

/**
 * The `google.rpc.Status` message of an OTLP error: Governor's code first, so an exporter's or the
 * Collector's log line ("GOV_ERR_INGEST_ROLLUP_BEHIND: the request rollup needs …") leads to its row in
 * docs/errors.md. The Status has no other field an OTLP client reads.
 */
export function otlpErrorMessage(error: GovernorError): string {
  return `${error.code}: ${error.message}`;
}
