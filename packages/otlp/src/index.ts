export { decodeTraceRequestProtobuf, decodeMetricsRequestProtobuf } from './decode-protobuf.ts';
export { decodeTraceRequestJson, decodeMetricsRequestJson } from './decode-json.ts';
export { normalizeTraceRequest } from './normalize-spans.ts';
export type { NormalizeOptions, NormalizedSpans } from './normalize-spans.ts';
export { normalizeMetricsRequest } from './normalize-metrics.ts';
export type { NormalizedMetrics } from './normalize-metrics.ts';
export { createHopClassifier } from './classify-hop.ts';
export {
  createFleetIdentity,
  gpuTypeFromProduct,
  samplingProbabilityFromTraceState,
} from './fleet-identity.ts';
export type { FleetIdentity, FleetIdentityOptions, PoolIdentity } from './fleet-identity.ts';
export type { HopClassifier } from './classify-hop.ts';
export { findSpanProblem } from './validate-span.ts';
export { SPAN_COLUMNS, METRIC_POINT_COLUMNS } from './span-row.ts';
export type { SpanRow, MetricPointRow, SpanColumnType } from './span-row.ts';
export {
  encodeExportResponseProtobuf,
  encodeExportResponseJson,
  encodeRpcStatusProtobuf,
  encodeRpcStatusJson,
} from './encode-responses.ts';
export type { ExportResult } from './encode-responses.ts';
export { encodeTraceRequestProtobuf } from './encode-trace-request.ts';
export { encodeMetricsRequestProtobuf } from './encode-metrics-request.ts';
export { OtlpDecodeError } from './types.ts';
export type {
  AttributeValue,
  Attributes,
  DecodedSpan,
  DecodedEvent,
  DecodedTraceRequest,
  DecodedResourceSpans,
  DecodedMetricsRequest,
  DecodedMetric,
  DecodedDataPoint,
  MetricType,
} from './types.ts';
export {
  COLUMN_BATCH_MAX_ROWS,
  columnBatchBuffers,
  createColumnEncoder,
  type ColumnBatch,
  type ColumnData,
  columnValueBytes,
  INLINE_STRING_BYTES,
  STRING_ENTRY_BYTES,
  validityMaskBytes,
} from './column-batch.ts';
export { createColumnReader, readColumnBatch, type ColumnSpec } from './read-column-batch.ts';
