import { parentPort, workerData } from 'node:worker_threads';
import type { HopRuleConfig } from '@governor/conventions';
import { type FleetIdentityOptions, OtlpDecodeError, columnBatchBuffers } from '@governor/otlp';
import {
  type OtlpFormat,
  type OtlpSignal,
  createDecodeSettings,
  decodeOtlpBody,
} from './decode-otlp-body.ts';
import { readThreadCpuUs, readThreadId } from '@governor/store/thread-cpu-clock';

// A decode worker (see decode-pool.ts): decodes and normalizes request bodies off the main thread
// and sends back the rows laid out as columns (their buffers transferred, not copied).

export interface DecodeTask {
  id: number;
  signal: OtlpSignal;
  format: OtlpFormat;
  body: Uint8Array;
  /** Rows dated later are refused (the server clock at intake + ingest.max_future_skew). */
  maxEventNs: bigint;
}

/** This worker's CPU so far, by step (microseconds; `transferUs`: the column layout, and posting up to the previous reply). */
export interface WorkerCpu {
  decodeUs: number;
  normalizeUs: number;
  transferUs: number;
}

export type DecodeReply =
  | { id: number; ok: true; result: ReturnType<typeof decodeOtlpBody>; cpu: WorkerCpu }
  | { id: number; ok: false; undecodable: boolean; message: string; cpu: WorkerCpu };

/** Sent once at start: the worker's thread id, so its CPU is not counted as DuckDB's. */
export interface WorkerHello {
  threadId: number | null;
}

export interface DecodeWorkerData {
  hopRules: HopRuleConfig[];
  aliases: Record<string, string>;
  fleet: FleetIdentityOptions;
}

const data = workerData as DecodeWorkerData;
const settings = createDecodeSettings(data.hopRules, data.aliases, data.fleet);
const cpu: WorkerCpu = { decodeUs: 0, normalizeUs: 0, transferUs: 0 };

parentPort?.postMessage({ threadId: readThreadId() } satisfies WorkerHello);
parentPort?.on('message', (task: DecodeTask) => {
  let reply: DecodeReply;
  let transfer: ArrayBuffer[] = [];
  try {
    const result = decodeOtlpBody(task.signal, task.body, task.format, settings, task.maxEventNs, cpu);
    transfer = columnBatchBuffers([...result.spans, ...result.metrics]);
    reply = { id: task.id, ok: true, result, cpu: { ...cpu } };
  } catch (error) {
    reply = {
      id: task.id,
      ok: false,
      undecodable: error instanceof OtlpDecodeError,
      message: (error as Error).message ?? String(error),
      cpu: { ...cpu },
    };
  }
  const started = readThreadCpuUs();
  parentPort?.postMessage(reply, transfer);
  cpu.transferUs += readThreadCpuUs() - started;
});
