import { parentPort, workerData } from 'node:worker_threads';
import type { HopRuleConfig } from '@governor/conventions';
import { type FleetIdentityOptions, OtlpDecodeError } from '@governor/otlp';
import {
  type OtlpFormat,
  type OtlpSignal,
  createDecodeSettings,
  decodeOtlpBody,
} from './decode-otlp-body.ts';

// A decode worker (see decode-pool.ts): decodes and normalizes request bodies off the main thread
// and sends back the rows.

export interface DecodeTask {
  id: number;
  signal: OtlpSignal;
  format: OtlpFormat;
  body: Uint8Array;
}

export type DecodeReply =
  | { id: number; ok: true; result: ReturnType<typeof decodeOtlpBody> }
  | { id: number; ok: false; undecodable: boolean; message: string };

export interface DecodeWorkerData {
  hopRules: HopRuleConfig[];
  aliases: Record<string, string>;
  fleet: FleetIdentityOptions;
}

const data = workerData as DecodeWorkerData;
const settings = createDecodeSettings(data.hopRules, data.aliases, data.fleet);

parentPort?.on('message', (task: DecodeTask) => {
  let reply: DecodeReply;
  try {
    reply = { id: task.id, ok: true, result: decodeOtlpBody(task.signal, task.body, task.format, settings) };
  } catch (error) {
    reply = {
      id: task.id,
      ok: false,
      undecodable: error instanceof OtlpDecodeError,
      message: (error as Error).message ?? String(error),
    };
  }
  parentPort?.postMessage(reply);
});
