import { availableParallelism } from 'node:os';
import type { GovernorConfig } from '@governor/conventions';
import { type ExportResult, OtlpDecodeError } from '@governor/otlp';
import { QueueFullError, type Store, WriterClosedError } from '@governor/store';
import { GovernorError } from '../errors.ts';
import {
  type DecodedBody,
  type OtlpFormat,
  type OtlpSignal,
  createDecodeSettings,
  decodeOtlpBody,
} from './decode-otlp-body.ts';
import { type DecodePool, createDecodePool } from './decode-pool.ts';

// decode → validate/normalize → write: the chain shared by OTLP/HTTP and OTLP/gRPC. Decoding runs
// in a small worker pool (decode-pool.ts) so the main thread keeps the DuckDB appends and HTTP;
// small bodies are decoded inline, where a round trip to a worker would cost more than it saves.

export type { OtlpFormat, OtlpSignal } from './decode-otlp-body.ts';

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
  /** Stops the decode workers. */
  close(): Promise<void>;
}

export interface IngestPipelineOptions {
  /** Decode workers; 0 decodes on the main thread. Default: GOVERNOR_DECODE_WORKERS, else cores − 1 (at most 2). */
  decodeWorkers?: number;
  /** Bodies smaller than this are decoded inline. */
  inlineBelowBytes?: number;
}

function defaultDecodeWorkers(): number {
  const fromEnv = Number(process.env.GOVERNOR_DECODE_WORKERS);
  if (process.env.GOVERNOR_DECODE_WORKERS && Number.isInteger(fromEnv) && fromEnv >= 0) return fromEnv;
  return Math.max(0, Math.min(2, availableParallelism() - 1));
}

export function createIngestPipeline(
  store: Store,
  config: GovernorConfig,
  options: IngestPipelineOptions = {},
): IngestPipeline {
  const settings = createDecodeSettings(config.hop_rules, config.attribute_aliases);
  const workers = options.decodeWorkers ?? defaultDecodeWorkers();
  const inlineBelowBytes = options.inlineBelowBytes ?? 16 * 1024;
  const pool: DecodePool | null =
    workers > 0
      ? createDecodePool({ size: workers, hopRules: config.hop_rules, aliases: config.attribute_aliases })
      : null;
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

  const decode = async (signal: OtlpSignal, body: Uint8Array, format: OtlpFormat): Promise<DecodedBody> => {
    try {
      if (pool === null || body.byteLength < inlineBelowBytes)
        return decodeOtlpBody(signal, body, format, settings);
      return await pool.decode(signal, body, format);
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
    async close() {
      await pool?.close();
    },
    async ingest(signal, body, format) {
      const decoded = await decode(signal, body, format);
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
