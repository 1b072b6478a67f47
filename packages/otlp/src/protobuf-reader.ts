import { OtlpDecodeError } from './types.ts';

// A minimal protobuf wire-format reader: enough for OTLP, without generated code or object churn.
// Nested messages narrow the reader's limit (enter/leave) instead of allocating sub-readers.
// Every read is bounds-checked against the current limit; malformed input throws OtlpDecodeError,
// never a RangeError.

// Buffer's native slicers skip toString()'s argument handling — a large share of decode time for
// OTLP's many short strings. They are undocumented but present in every Node release; fall back if not.
interface NativeSlices {
  utf8Slice(start: number, end: number): string;
  hexSlice(start: number, end: number): string;
}
const hasNativeSlices =
  typeof (Buffer.prototype as unknown as Partial<NativeSlices>).utf8Slice === 'function' &&
  typeof (Buffer.prototype as unknown as Partial<NativeSlices>).hexSlice === 'function';

export class ProtobufReader {
  pos = 0;
  /** End of the message being read (the enclosing sub-message while inside one). */
  limit: number;
  private readonly buf: Buffer;
  private readonly view: DataView;

  constructor(bytes: Uint8Array) {
    this.buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.limit = bytes.length;
  }

  done(): boolean {
    return this.pos >= this.limit;
  }

  /** Reads a field key: field number is `key >>> 3`, wire type `key & 7`. */
  tag(): number {
    const key = this.varint32();
    if (key >>> 3 === 0) throw new OtlpDecodeError(`invalid protobuf field number 0 at byte ${this.pos}`);
    return key;
  }

  varint32(): number {
    const buf = this.buf;
    let result = 0;
    let shift = 0;
    while (true) {
      if (this.pos >= this.limit) throw new OtlpDecodeError('truncated protobuf varint');
      const byte = buf[this.pos++]!;
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
      if (this.pos >= this.limit) throw new OtlpDecodeError('truncated protobuf varint');
      const byte = this.buf[this.pos++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return BigInt.asIntN(64, result);
      shift += 7n;
    }
    throw new OtlpDecodeError('protobuf varint longer than 10 bytes');
  }

  /** An int64 varint as a number when it is a safe integer, else as a decimal string. */
  int64(): number | string {
    const start = this.pos;
    const buf = this.buf;
    let result = 0;
    let scale = 1;
    // Up to 7 bytes (49 bits) fit a double exactly; longer varints take the bigint path.
    for (let i = 0; i < 7; i++) {
      if (this.pos >= this.limit) throw new OtlpDecodeError('truncated protobuf varint');
      const byte = buf[this.pos++]!;
      result += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) return result;
      scale *= 128;
    }
    this.pos = start;
    const v = this.varint64();
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(v)
      : v.toString();
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

  double(): number {
    this.need(8);
    const value = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return value;
  }

  private length(): number {
    const length = this.varint32();
    this.need(length);
    return length;
  }

  string(): string {
    const length = this.length();
    const start = this.pos;
    this.pos += length;
    if (length === 0) return '';
    return hasNativeSlices
      ? (this.buf as unknown as NativeSlices).utf8Slice(start, start + length)
      : this.buf.toString('utf8', start, start + length);
  }

  hex(): string {
    const length = this.length();
    const start = this.pos;
    this.pos += length;
    if (length === 0) return '';
    return hasNativeSlices
      ? (this.buf as unknown as NativeSlices).hexSlice(start, start + length)
      : this.buf.toString('hex', start, start + length);
  }

  base64(): string {
    const length = this.length();
    const start = this.pos;
    this.pos += length;
    return this.buf.toString('base64', start, start + length);
  }

  /** Narrows the reader to the length-delimited sub-message that follows; returns the outer limit for leave(). */
  enter(): number {
    const length = this.length();
    const outer = this.limit;
    this.limit = this.pos + length;
    return outer;
  }

  /** Moves past the current sub-message and restores the outer limit. */
  leave(outer: number): void {
    this.pos = this.limit;
    this.limit = outer;
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
      case 2: {
        // Not `this.pos += this.length()`: that reads pos before length() advances it.
        const length = this.length();
        this.pos += length;
        return;
      }
      case 5:
        this.need(4);
        this.pos += 4;
        return;
      default:
        throw new OtlpDecodeError(`unsupported protobuf wire type ${wireType} at byte ${this.pos}`);
    }
  }

  private need(bytes: number): void {
    if (bytes < 0 || this.pos + bytes > this.limit) {
      throw new OtlpDecodeError(
        `truncated protobuf message: needed ${bytes} bytes at ${this.pos}, have ${this.limit - this.pos}`,
      );
    }
  }
}
