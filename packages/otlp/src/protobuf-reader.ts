import { OtlpDecodeError } from './types.ts';

// A minimal protobuf wire-format reader: enough for OTLP, without generated code or object churn.
// Every read is bounds-checked; malformed input throws OtlpDecodeError, never a RangeError.

const textDecoder = new TextDecoder('utf-8', { fatal: false });

export class ProtobufReader {
  pos: number;
  readonly end: number;
  private readonly view: DataView;

  constructor(
    readonly buf: Uint8Array,
    start = 0,
    end = buf.length,
  ) {
    this.pos = start;
    this.end = end;
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  done(): boolean {
    return this.pos >= this.end;
  }

  /** Returns [fieldNumber, wireType]. */
  tag(): [number, number] {
    const key = this.varint32();
    const field = key >>> 3;
    if (field === 0) throw new OtlpDecodeError(`invalid protobuf field number 0 at byte ${this.pos}`);
    return [field, key & 7];
  }

  varint32(): number {
    let result = 0;
    let shift = 0;
    while (true) {
      if (this.pos >= this.end) throw new OtlpDecodeError('truncated protobuf varint');
      const byte = this.buf[this.pos++]!;
      if (shift < 28) result |= (byte & 0x7f) << shift;
      else if (shift < 64) result += (byte & 0x7f) * 2 ** shift;
      else throw new OtlpDecodeError('protobuf varint longer than 10 bytes');
      if ((byte & 0x80) === 0) return result;
      shift += 7;
    }
  }

  /** Full 64-bit varint as a bigint (two's complement for negatives). */
  varint64(): bigint {
    let result = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new OtlpDecodeError('truncated protobuf varint');
      const byte = this.buf[this.pos++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return BigInt.asIntN(64, result);
      shift += 7n;
    }
    throw new OtlpDecodeError('protobuf varint longer than 10 bytes');
  }

  fixed64(): bigint {
    this.need(8);
    const value = this.view.getBigUint64(this.pos, true);
    this.pos += 8;
    return value;
  }

  sfixed64(): bigint {
    this.need(8);
    const value = this.view.getBigInt64(this.pos, true);
    this.pos += 8;
    return value;
  }

  fixed32(): number {
    this.need(4);
    const value = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return value;
  }

  double(): number {
    this.need(8);
    const value = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return value;
  }

  /** Reads a length prefix and returns [start, end] of the delimited bytes, advancing past them. */
  delimited(): [number, number] {
    const length = this.varint32();
    const start = this.pos;
    this.need(length);
    this.pos += length;
    return [start, start + length];
  }

  string(): string {
    const [start, end] = this.delimited();
    return textDecoder.decode(this.buf.subarray(start, end));
  }

  hex(): string {
    const [start, end] = this.delimited();
    let out = '';
    for (let i = start; i < end; i++) out += HEX[this.buf[i]!];
    return out;
  }

  base64(): string {
    const [start, end] = this.delimited();
    return Buffer.from(this.buf.buffer, this.buf.byteOffset + start, end - start).toString('base64');
  }

  sub(): ProtobufReader {
    const [start, end] = this.delimited();
    return new ProtobufReader(this.buf, start, end);
  }

  skip(wireType: number): void {
    switch (wireType) {
      case 0:
        this.varint64();
        return;
      case 1:
        this.need(8);
        this.pos += 8;
        return;
      case 2:
        this.delimited();
        return;
      case 5:
        this.need(4);
        this.pos += 4;
        return;
      default:
        throw new OtlpDecodeError(`unsupported protobuf wire type ${wireType} at byte ${this.pos}`);
    }
  }

  private need(bytes: number): void {
    if (bytes < 0 || this.pos + bytes > this.end) {
      throw new OtlpDecodeError(
        `truncated protobuf message: needed ${bytes} bytes at ${this.pos}, have ${this.end - this.pos}`,
      );
    }
  }
}

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
