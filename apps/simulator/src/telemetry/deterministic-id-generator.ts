import type { IdGenerator } from '@opentelemetry/sdk-trace';
import { hashChain } from '../engine/random.ts';

const hex8 = (value: number): string => (value >>> 0).toString(16).padStart(8, '0');

/**
 * Ids that depend only on (seed, trace serial, span index within the trace), so the same seed
 * yields the same trace and span ids whatever the export timing.
 */
export interface DeterministicIdGenerator extends IdGenerator {
  beginTrace(serial: number): void;
}

export function createDeterministicIdGenerator(seed: number): DeterministicIdGenerator {
  let serial = 0;
  let spanIndex = 0;
  return {
    beginTrace(nextSerial) {
      serial = nextSerial;
      spanIndex = 0;
    },
    generateTraceId() {
      const inputs = [seed, serial];
      return (
        hex8(hashChain(0x1b873593, inputs)) +
        hex8(hashChain(0xcc9e2d51, inputs)) +
        hex8(hashChain(0x85ebca6b, inputs)) +
        hex8(hashChain(0xc2b2ae35, inputs) | 1)
      );
    },
    generateSpanId() {
      spanIndex += 1;
      const inputs = [seed, serial, spanIndex];
      return hex8(hashChain(0x27d4eb2f, inputs)) + hex8(hashChain(0x165667b1, inputs) | 1);
    },
  };
}
