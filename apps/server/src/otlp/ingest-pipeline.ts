import { availableParallelism } from 'node:os';
import { type GovernorConfig, maxAcceptedEventNs, maxRollupLagMs } from '@governor/conventions';
import { type ExportResult, OtlpDecodeError } from '@governor/otlp';
import { QueueFullError, type TelemetryStore, WriterClosedError } from '@governor/store';
import type { RollupLag } from '@governor/signals';
import { GovernorError } from '../errors.ts';
import {
  type DecodedBody,
  type OtlpFormat,
  type OtlpSignal,
  createDecodeSettings,
  fleetIdentityOptions,
  decodeOtlpBody,
} from './decode-otlp-body.ts';
import { type DecodePool, createDecodePool } from './decode-pool.ts';
import { traceIngestBatch } from '../observability/self-tracing-spans.ts';

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
  /** Spans and points refused by an intake guard (partial success), by reason, e.g. `future`. */
  rowsRejected: Record<string, number>;
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
  /** Server clock, ms since the epoch (the event-time guard's reference). */
  now?: () => number;
  /**
   * How far the request rollup is behind (Signals.rollupLag): span exports are refused while it
   * is more than ingest.max_rollup_lag behind by the wall clock and also needs longer than that to
   * take in the spans waiting (RollupLag.catchUpMs), unless it is failing. Absent: no such back-pressure.
   */
  rollupLag?: () => RollupLag | null;
}

/** Retry-After of an export refused because the rollup is behind: about one refresh interval. */
const ROLLUP_BEHIND_RETRY_AFTER_S = 2;

function defaultDecodeWorkers(): number {
  const fromEnv = Number(process.env.GOVERNOR_DECODE_WORKERS);
  if (process.env.GOVERNOR_DECODE_WORKERS && Number.isInteger(fromEnv) && fromEnv >= 0) return fromEnv;
  return Math.max(0, Math.min(2, availableParallelism() - 1));
}

export function createIngestPipeline(
  store: TelemetryStore,
  config: GovernorConfig,
  options: IngestPipelineOptions = {},
): IngestPipeline {
  const fleet = fleetIdentityOptions(config);
  const settings = createDecodeSettings(config.hop_rules, config.attribute_aliases, fleet);
  const workers = options.decodeWorkers ?? defaultDecodeWorkers();
  const inlineBelowBytes = options.inlineBelowBytes ?? 16 * 1024;
  const pool: DecodePool | null =
    workers > 0
      ? createDecodePool({
          size: workers,
          hopRules: config.hop_rules,
          aliases: config.attribute_aliases,
          fleet,
          onCpu: (stage, us) => store.ingestCpu.add(stage, us),
        })
      : null;
  if (pool) store.ingestCpu.setForegroundThreads(() => pool.threadIds());
  const counters: IngestCounters = {
    spansAccepted: 0,
    spansRejected: 0,
    pointsAccepted: 0,
    pointsRejected: 0,
    requestsRejected: {},
    rowsRejected: {},
  };
  const now = options.now ?? Date.now;
  const maxLagMs = maxRollupLagMs(config.ingest);
  const countRejection = (reason: string) => {
    counters.requestsRejected[reason] = (counters.requestsRejected[reason] ?? 0) + 1;
  };

  const decode = async (signal: OtlpSignal, body: Uint8Array, format: OtlpFormat): Promise<DecodedBody> => {
    const maxEventNs = maxAcceptedEventNs(config.ingest, BigInt(now()) * 1_000_000n);
    try {
      if (pool === null || body.byteLength < inlineBelowBytes) {
        const cpu = { decodeUs: 0, normalizeUs: 0, transferUs: 0 };
        try {
          return decodeOtlpBody(signal, body, format, settings, maxEventNs, cpu);
        } finally {
          store.ingestCpu.add('decode', cpu.decodeUs, true);
          store.ingestCpu.add('normalize', cpu.normalizeUs, true);
          store.ingestCpu.add('transfer', cpu.transferUs, true);
        }
      }
      return await pool.decode(signal, body, format, maxEventNs);
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
    ingest(signal, body, format) {
      // Checked before decoding: a refused export costs nothing but its body read.
      const lag = signal === 'traces' ? options.rollupLag?.() : null;
      // Behind by the clock and by what is waiting at the rollup's speed: a checkpoint stalls the
      // rollup for seconds with few spans waiting, and refusing spans would not end the stall.
      if (lag && !lag.failing && lag.ms > maxLagMs && lag.catchUpMs > maxLagMs) {
        countRejection('rollup_behind');
        return Promise.reject(
          new GovernorError(
            'GOV_ERR_INGEST_ROLLUP_BEHIND',
            `the request rollup needs ${(lag.catchUpMs / 1000).toFixed(1)} s to take in the spans waiting (ingest.max_rollup_lag ${config.ingest.max_rollup_lag}): spans arrive faster than Governor can roll them up; retry after ${ROLLUP_BEHIND_RETRY_AFTER_S} s`,
            ROLLUP_BEHIND_RETRY_AFTER_S,
          ),
        );
      }
      return traceIngestBatch(
        { signal, format, bodyBytes: body.byteLength },
        {
          decode: () => decode(signal, body, format),
          writeAndAck: (decoded, traceWrite) => writeAndAck(signal, decoded, traceWrite),
        },
      );
    },
  };

  async function writeAndAck(
    signal: OtlpSignal,
    decoded: DecodedBody,
    traceWrite: <W>(write: () => Promise<W>) => Promise<W>,
  ): Promise<ExportResult> {
    if (decoded.futureRejected > 0)
      counters.rowsRejected.future = (counters.rowsRejected.future ?? 0) + decoded.futureRejected;
    const { rejected, problems } = decoded;
    try {
      await traceWrite(() => store.writer.writeColumns(decoded));
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
      throw new GovernorError('GOV_ERR_INGEST_WRITE_FAILED', `${(error as Error).message}; retry later`, 5, {
        cause: error,
      });
    }
    if (signal === 'traces') {
      counters.spansAccepted += decoded.spanCount;
      counters.spansRejected += rejected;
    } else {
      counters.pointsAccepted += decoded.pointCount;
      counters.pointsRejected += rejected;
    }
    const what = signal === 'traces' ? 'spans' : 'data points';
    return {
      signal,
      rejected,
      errorMessage: rejected > 0 ? `${rejected} ${what} rejected: ${problems.join('; ')}` : '',
    };
  }
}
