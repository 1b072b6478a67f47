import { parentPort, workerData } from 'node:worker_threads';
import type { HopRuleConfig } from '@governor/conventions';
import { type FleetIdentityOptions, OtlpDecodeError } from '@governor/otlp';
import {
  type OtlpFormat,
  type OtlpSignal,
  createDecodeSettings,
  decodeOtlpBody,
} from './decode-otlp-body.ts';
import { readThreadCpuUs, readThreadId } from '@governor/store/thread-cpu-clock';

// A decode worker (see decode-pool.ts): decodes and normalizes request bodies off the main thread
// and sends back the rows.

export interface DecodeTask {
  id: number;
  signal: OtlpSignal;
  format: OtlpFormat;
  body: Uint8Array;
}

/** This worker's CPU so far, by step (microseconds; `transferUs` up to the previous reply). */
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
  try {
    const result = decodeOtlpBody(task.signal, task.body, task.format, settings, cpu);
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
  // postMessage serializes the rows (structured clone) on this thread.
  const started = readThreadCpuUs();
  parentPort?.postMessage(reply);
  cpu.transferUs += readThreadCpuUs() - started;
});
