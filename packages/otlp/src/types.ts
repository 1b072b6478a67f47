// The decoded form of an OTLP export, shared by the protobuf and JSON decoders. Attribute values
// keep their OTLP type: strings, booleans, numbers (int64 beyond 2^53 stays a decimal string),
// arrays, key-value lists as plain objects, bytes as base64.

export type AttributeValue =
  | string
  | number
  | boolean
  | null
  | AttributeValue[]
  | { [key: string]: AttributeValue };
export type Attributes = Record<string, AttributeValue>;

export interface DecodedEvent {
  timeNs: bigint;
  name: string;
  attributes: Attributes;
}

export interface DecodedSpan {
  /** Lowercase hex; empty string when absent. */
  traceId: string;
  spanId: string;
  parentSpanId: string;
  traceState: string;
  name: string;
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Attributes;
  events: DecodedEvent[];
  linkCount: number;
  statusCode: number;
  statusMessage: string;
}

export interface DecodedScope {
  name: string;
  version: string;
}

export interface DecodedScopeSpans {
  scope: DecodedScope;
  spans: DecodedSpan[];
}

export interface DecodedResourceSpans {
  resource: Attributes;
  scopeSpans: DecodedScopeSpans[];
}

export interface DecodedTraceRequest {
  resourceSpans: DecodedResourceSpans[];
}

export type MetricType = 'gauge' | 'sum' | 'histogram' | 'exponential_histogram' | 'summary';

export interface DecodedDataPoint {
  attributes: Attributes;
  startNs: bigint;
  timeNs: bigint;
  /** Gauge/sum value; null for distributions. */
  value: number | null;
  count: number | null;
  sum: number | null;
  min: number | null;
  max: number | null;
  bucketCounts: number[] | null;
  explicitBounds: number[] | null;
  quantiles: { quantile: number; value: number }[] | null;
}

export interface DecodedMetric {
  name: string;
  description: string;
  unit: string;
  type: MetricType | null;
  isMonotonic: boolean;
  temporality: number;
  points: DecodedDataPoint[];
}

export interface DecodedScopeMetrics {
  scope: DecodedScope;
  metrics: DecodedMetric[];
}

export interface DecodedResourceMetrics {
  resource: Attributes;
  scopeMetrics: DecodedScopeMetrics[];
}

export interface DecodedMetricsRequest {
  resourceMetrics: DecodedResourceMetrics[];
}

/** Raised for a body that cannot be decoded at all; maps to HTTP 400 / gRPC INVALID_ARGUMENT. */
export class OtlpDecodeError extends Error {
  override readonly name = 'OtlpDecodeError';
}
