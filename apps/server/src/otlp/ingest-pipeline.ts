import type { GovernorConfig } from '@governor/conventions';
import {
  type ExportResult,
  OtlpDecodeError,
  createHopClassifier,
  decodeMetricsRequestJson,
  decodeMetricsRequestProtobuf,
  decodeTraceRequestJson,
  decodeTraceRequestProtobuf,
  normalizeMetricsRequest,
  normalizeTraceRequest,
} from '@governor/otlp';
import { QueueFullError, type Store, WriterClosedError } from '@governor/store';
import { GovernorError } from '../errors.ts';

// decode → validate/normalize → write: the chain shared by OTLP/HTTP and OTLP/gRPC.

export type OtlpFormat = 'protobuf' | 'json';
export type OtlpSignal = 'traces' | 'metrics';

export interface IngestCounters {
  spansAccepted: number;
  spansRejected: number;
  pointsAccepted: number;
  pointsRejected: number;
  requestsRejected: Record<string, number>;
}

export interface IngestPipeline {
  ingest(signal: OtlpSignal, body: Uint8Array, format: OtlpFormat): Promise<ExportResult>;
  counters: IngestCounters;
}

export function createIngestPipeline(store: Store, config: GovernorConfig): IngestPipeline {
  const classifier = createHopClassifier(
    config.hop_rules.map((r) => ({
      hop: r.hop,
      spanName: r.span_name,
      serviceName: r.service_name,
      attribute: r.attribute,
      attributeEquals: r.attribute_equals,
    })),
  );
  const aliases = config.attribute_aliases;
  const counters: IngestCounters = {
    spansAccepted: 0,
    spansRejected: 0,
    pointsAccepted: 0,
    pointsRejected: 0,
    requestsRejected: {},
  };
  const countRejection = (reason: string) => {
    counters.requestsRejected[reason] = (counters.requestsRejected[reason] ?? 0) + 1;
  };

  const decode = (signal: OtlpSignal, body: Uint8Array, format: OtlpFormat) => {
    try {
      if (signal === 'traces') {
        const request =
          format === 'protobuf'
            ? decodeTraceRequestProtobuf(body)
            : decodeTraceRequestJson(Buffer.from(body).toString('utf8'));
        const n = normalizeTraceRequest(request, { classifier, aliases });
        return { spans: n.rows, metrics: [], rejected: n.rejected, problems: n.problems };
      }
      const request =
        format === 'protobuf'
          ? decodeMetricsRequestProtobuf(body)
          : decodeMetricsRequestJson(Buffer.from(body).toString('utf8'));
      const n = normalizeMetricsRequest(request, aliases);
      return { spans: [], metrics: n.rows, rejected: n.rejected, problems: n.problems };
    } catch (error) {
      countRejection('undecodable');
      if (error instanceof OtlpDecodeError) {
        throw new GovernorError(
          'GOV_ERR_OTLP_UNDECODABLE',
          `cannot decode OTLP ${format} ${signal}: ${error.message}`,
        );
      }
      throw new GovernorError(
        'GOV_ERR_OTLP_UNDECODABLE',
        `cannot decode OTLP ${format} ${signal}: ${(error as Error).message}`,
        undefined,
        { cause: error },
      );
    }
  };

  return {
    counters,
    async ingest(signal, body, format) {
      const decoded = decode(signal, body, format);
      try {
        await store.writer.write(decoded.spans, decoded.metrics);
      } catch (error) {
        if (error instanceof QueueFullError) {
          countRejection('queue_full');
          throw new GovernorError('GOV_ERR_INGEST_QUEUE_FULL', error.message, error.retryAfterS);
        }
        if (error instanceof WriterClosedError) {
          countRejection('shutting_down');
          throw new GovernorError('GOV_ERR_INGEST_SHUTTING_DOWN', error.message, 5);
        }
        countRejection('write_failed');
        throw new GovernorError(
          'GOV_ERR_INGEST_WRITE_FAILED',
          `${(error as Error).message}; retry later`,
          5,
          {
            cause: error,
          },
        );
      }
      if (signal === 'traces') {
        counters.spansAccepted += decoded.spans.length;
        counters.spansRejected += decoded.rejected;
      } else {
        counters.pointsAccepted += decoded.metrics.length;
        counters.pointsRejected += decoded.rejected;
      }
      const what = signal === 'traces' ? 'spans' : 'data points';
      return {
        signal,
        rejected: decoded.rejected,
        errorMessage:
          decoded.rejected > 0 ? `${decoded.rejected} ${what} rejected: ${decoded.problems.join('; ')}` : '',
      };
    },
  };
}
