import { describe, expect, it } from 'vitest';
import { ProtobufReader } from './protobuf-reader.ts';
import { ProtobufWriter } from './protobuf-writer.ts';
import { OtlpDecodeError } from './types.ts';

describe('protobuf reader and writer', () => {
  it('round-trips every wire type the OTLP messages use', () => {
    const bytes = new ProtobufWriter()
      .uint(1, 300)
      .varintAlways(2, 0)
      .fixed64(3, 0xffff_ffff_ffff_fff0n)
      .double(4, -1.5)
      .string(5, 'hé — ok')
      .bytes(6, Uint8Array.from([0xab, 0xcd]))
      .message(7, (m) => m.uint(1, 2 ** 40).string(2, 'x'.repeat(300)))
      .varintAlways(8, -1)
      .bytesOut();
    const r = new ProtobufReader(bytes);
    const seen: unknown[] = [];
    while (!r.done()) {
      const key = r.tag();
      switch (key >>> 3) {
        case 1:
        case 2:
          seen.push(r.varint32());
          break;
        case 3:
          seen.push(r.fixed64());
          break;
        case 4:
          seen.push(r.double());
          break;
        case 5:
          seen.push(r.string());
          break;
        case 6:
          seen.push(r.hex());
          break;
        case 7: {
          const outer = r.enter();
          r.tag();
          seen.push(r.int64());
          r.tag();
          seen.push(r.string().length);
          r.leave(outer);
          break;
        }
        case 8:
          seen.push(r.int64());
          break;
      }
    }
    expect(seen).toEqual([300, 0, 0xffff_ffff_ffff_fff0n, -1.5, 'hé — ok', 'abcd', 2 ** 40, 300, -1]);
  });

  it('keeps int64 values beyond 2^53 exact, as decimal strings', () => {
    const big = 2n ** 60n + 7n;
    const r = new ProtobufReader(new ProtobufWriter().uint(1, big).bytesOut());
    r.tag();
    expect(r.int64()).toBe(big.toString());
  });

  it('stops at the end of a sub-message and throws OtlpDecodeError past it', () => {
    // A length-delimited field claiming 5 bytes inside a 2-byte sub-message.
    const bytes = Uint8Array.from([0x0a, 0x02, 0x12, 0x05, 0x41, 0x42, 0x43]);
    const r = new ProtobufReader(bytes);
    r.tag();
    r.enter();
    r.tag();
    expect(() => r.string()).toThrow(OtlpDecodeError);
  });

  it('throws OtlpDecodeError, never a RangeError, on truncated input', () => {
    for (const bytes of [[0x80], [0x09, 1, 2, 3], [0x0a, 0x7f], [0x0d, 1], [0x0f], [0x00]]) {
      const r = new ProtobufReader(Uint8Array.from(bytes));
      expect(() => {
        while (!r.done()) r.skip(r.tag() & 7);
      }).toThrow(OtlpDecodeError);
    }
  });

  it('widens the length prefix of a nested message past 127 bytes', () => {
    const body = 'y'.repeat(20_000);
    const bytes = new ProtobufWriter().message(1, (m) => m.string(1, body)).bytesOut();
    const r = new ProtobufReader(bytes);
    r.tag();
    const outer = r.enter();
    r.tag();
    expect(r.string()).toBe(body);
    r.leave(outer);
    expect(r.done()).toBe(true);
  });
});
