import { writeAttributes } from './encode-attributes.ts';
import { ProtobufWriter } from './protobuf-writer.ts';
import type { DecodedDataPoint, DecodedMetric, DecodedMetricsRequest } from './types.ts';

// Encodes an ExportMetricsServiceRequest, for fixtures and tests (the server only decodes).
// Gauge and sum values are written as as_double; exponential histograms are not supported.

const DATA_FIELD = { gauge: 5, sum: 7, histogram: 9, summary: 11 } as const;

export function encodeMetricsRequestProtobuf(request: DecodedMetricsRequest): Uint8Array {
  const w = new ProtobufWriter();
  for (const rm of request.resourceMetrics) {
    w.message(1, (rmw) => {
      rmw.message(1, (res) => writeAttributes(res, 1, rm.resource));
      for (const sm of rm.scopeMetrics) {
        rmw.message(2, (smw) => {
          smw.message(1, (sc) => sc.string(1, sm.scope.name).string(2, sm.scope.version));
          for (const metric of sm.metrics) smw.message(2, (mw) => writeMetric(mw, metric));
        });
      }
    });
  }
  return w.bytesOut();
}

function writeMetric(w: ProtobufWriter, metric: DecodedMetric): void {
  w.string(1, metric.name).string(2, metric.description).string(3, metric.unit);
  if (metric.type === null || metric.type === 'exponential_histogram') return;
  const type = metric.type;
  w.message(DATA_FIELD[type], (dw) => {
    for (const point of metric.points) dw.message(1, (pw) => writePoint(pw, type, point));
    if (type === 'sum' || type === 'histogram') dw.uint(2, metric.temporality);
    if (type === 'sum') dw.bool(3, metric.isMonotonic);
  });
}

function writePoint(w: ProtobufWriter, type: keyof typeof DATA_FIELD, p: DecodedDataPoint): void {
  w.fixed64(2, p.startNs).fixed64(3, p.timeNs);
  if (type === 'gauge' || type === 'sum') {
    if (p.value !== null) w.double(4, p.value);
    writeAttributes(w, 7, p.attributes);
    return;
  }
  if (p.count !== null) w.fixed64Always(4, BigInt(Math.round(p.count)));
  if (p.sum !== null) w.double(5, p.sum);
  if (type === 'histogram') {
    w.packedFixed64(6, p.bucketCounts ?? []).packedDouble(7, p.explicitBounds ?? []);
    writeAttributes(w, 9, p.attributes);
    if (p.min !== null) w.double(11, p.min);
    if (p.max !== null) w.double(12, p.max);
    return;
  }
  for (const q of p.quantiles ?? []) w.message(6, (qw) => qw.double(1, q.quantile).double(2, q.value));
  writeAttributes(w, 7, p.attributes);
}
