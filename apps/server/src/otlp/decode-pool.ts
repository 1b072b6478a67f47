import { Worker } from 'node:worker_threads';
import type { HopRuleConfig } from '@governor/conventions';
import { type FleetIdentityOptions, OtlpDecodeError } from '@governor/otlp';
import type { DecodedBody, OtlpFormat, OtlpSignal } from './decode-otlp-body.ts';
import type { DecodeReply, DecodeTask, DecodeWorkerData, WorkerCpu, WorkerHello } from './decode-worker.ts';

// Decoding and normalizing move off the main thread, which keeps the DuckDB appends (they must
// run there) and HTTP. A few workers, each task to the least busy one; the rows come back laid out
// as columns, their buffers transferred. A crashed worker fails its tasks and is replaced.

export interface DecodePool {
  readonly size: number;
  decode(signal: OtlpSignal, body: Uint8Array, format: OtlpFormat, maxEventNs: bigint): Promise<DecodedBody>;
  /** The workers' thread ids (Linux), for counting their CPU apart from DuckDB's. */
  threadIds(): number[];
  close(): Promise<void>;
}

interface Slot {
  worker: Worker;
  pending: Map<number, { resolve: (r: DecodedBody) => void; reject: (e: Error) => void }>;
  threadId: number | null;
  /** The worker's CPU counters as of its last reply. */
  cpu: WorkerCpu;
}

const WORKER_URL = new URL('./decode-worker-entry.mjs', import.meta.url);

export function createDecodePool(options: {
  size: number;
  hopRules: readonly HopRuleConfig[];
  aliases: Readonly<Record<string, string>>;
  fleet?: FleetIdentityOptions;
  /** Called with the CPU microseconds each step took in the workers (decode, normalize, transfer). */
  onCpu?: (stage: 'decode' | 'normalize' | 'transfer', us: number) => void;
}): DecodePool {
  const data: DecodeWorkerData = {
    hopRules: [...options.hopRules],
    aliases: { ...options.aliases },
    fleet: options.fleet ?? { pools: [] },
  };
  let nextId = 0;
  let closed = false;

  const spawnSlot = (): Slot => {
    const slot: Slot = {
      worker: new Worker(WORKER_URL, { workerData: data, execArgv: [] }),
      pending: new Map(),
      threadId: null,
      cpu: { decodeUs: 0, normalizeUs: 0, transferUs: 0 },
    };
    slot.worker.on('message', (message: DecodeReply | WorkerHello) => {
      if (!('id' in message)) {
        slot.threadId = message.threadId;
        return;
      }
      const reply = message;
      if (options.onCpu) {
        options.onCpu('decode', reply.cpu.decodeUs - slot.cpu.decodeUs);
        options.onCpu('normalize', reply.cpu.normalizeUs - slot.cpu.normalizeUs);
        options.onCpu('transfer', reply.cpu.transferUs - slot.cpu.transferUs);
      }
      slot.cpu = reply.cpu;
      const task = slot.pending.get(reply.id);
      if (!task) return;
      slot.pending.delete(reply.id);
      if (reply.ok) task.resolve(reply.result);
      else task.reject(reply.undecodable ? new OtlpDecodeError(reply.message) : new Error(reply.message));
    });
    const fail = (error: Error) => {
      for (const task of slot.pending.values()) task.reject(error);
      slot.pending.clear();
      if (!closed) slots[slots.indexOf(slot)] = spawnSlot();
    };
    slot.worker.on('error', (error) =>
      fail(new Error(`decode worker failed: ${error.message}`, { cause: error })),
    );
    slot.worker.on('exit', (code) => {
      if (!closed && slot.pending.size > 0) fail(new Error(`decode worker exited with code ${code}`));
    });
    // An idle pool must not keep the process alive.
    slot.worker.unref();
    return slot;
  };
  const slots: Slot[] = Array.from({ length: options.size }, spawnSlot);

  return {
    size: options.size,
    threadIds: () => slots.flatMap((s) => (s.threadId === null ? [] : [s.threadId])),
    decode(signal, body, format, maxEventNs) {
      if (closed) return Promise.reject(new Error('the decode pool is closed'));
      let slot = slots[0]!;
      for (const s of slots) if (s.pending.size < slot.pending.size) slot = s;
      const id = nextId++;
      return new Promise<DecodedBody>((resolve, reject) => {
        slot.pending.set(id, { resolve, reject });
        if (slot.pending.size === 1) slot.worker.ref();
        const task: DecodeTask = { id, signal, format, body, maxEventNs };
        slot.worker.postMessage(task);
      }).finally(() => {
        if (slot.pending.size === 0) slot.worker.unref();
      });
    },
    async close() {
      closed = true;
      await Promise.all(slots.map((s) => s.worker.terminate()));
    },
  };
}
