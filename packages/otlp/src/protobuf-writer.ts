// A minimal protobuf wire-format writer for OTLP responses, google.rpc.Status and test fixtures.
// Writes into one growing byte buffer; a nested message is written in place behind a length prefix.

const textEncoder = new TextEncoder();

export class ProtobufWriter {
  private buf = new Uint8Array(256);
  private view = new DataView(this.buf.buffer);
  private pos = 0;

  bytesOut(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }

  private ensure(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.pos + bytes));
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  private varint(value: number | bigint): void {
    this.ensure(10);
    if (typeof value === 'number' && value >= 0 && value <= 0x7fffffff) {
      let v = value;
      while (v > 0x7f) {
        this.buf[this.pos++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      this.buf[this.pos++] = v;
      return;
    }
    let v = BigInt.asUintN(64, BigInt(value));
    while (v > 0x7fn) {
      this.buf[this.pos++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buf[this.pos++] = Number(v);
  }

  private tag(field: number, wire: number): void {
    this.varint((field << 3) | wire);
  }

  private raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  uint(field: number, value: number | bigint): this {
    if (value === 0 || value === 0n) return this;
    this.tag(field, 0);
    this.varint(value);
    return this;
  }

  /** Writes a varint field even when zero (oneof members). */
  varintAlways(field: number, value: number | bigint): this {
    this.tag(field, 0);
    this.varint(value);
    return this;
  }

  bool(field: number, value: boolean): this {
    if (!value) return this;
    this.tag(field, 0);
    this.varint(1);
    return this;
  }

  fixed64(field: number, value: bigint): this {
    if (value === 0n) return this;
    return this.fixed64Always(field, value);
  }

  /** Writes a fixed64 field even when zero (oneof members such as as_int). */
  fixed64Always(field: number, value: bigint): this {
    this.tag(field, 1);
    this.ensure(8);
    this.view.setBigUint64(this.pos, BigInt.asUintN(64, value), true);
    this.pos += 8;
    return this;
  }

  double(field: number, value: number): this {
    this.tag(field, 1);
    this.ensure(8);
    this.view.setFloat64(this.pos, value, true);
    this.pos += 8;
    return this;
  }

  packedFixed64(field: number, values: readonly (number | bigint)[]): this {
    if (values.length === 0) return this;
    const out = new Uint8Array(8 * values.length);
    const view = new DataView(out.buffer);
    for (const [i, v] of values.entries()) view.setBigUint64(i * 8, BigInt.asUintN(64, BigInt(v)), true);
    return this.bytes(field, out);
  }

  packedDouble(field: number, values: readonly number[]): this {
    if (values.length === 0) return this;
    const out = new Uint8Array(8 * values.length);
    const view = new DataView(out.buffer);
    for (const [i, v] of values.entries()) view.setFloat64(i * 8, v, true);
    return this.bytes(field, out);
  }

  bytes(field: number, value: Uint8Array): this {
    if (value.length === 0) return this;
    return this.bytesAlways(field, value);
  }

  private bytesAlways(field: number, value: Uint8Array): this {
    this.tag(field, 2);
    this.varint(value.length);
    this.raw(value);
    return this;
  }

  /** Writes the field even when empty (a oneof member must be present to be set). */
  stringAlways(field: number, value: string): this {
    return this.bytesAlways(field, textEncoder.encode(value));
  }

  string(field: number, value: string): this {
    return this.bytes(field, textEncoder.encode(value));
  }

  message(field: number, build: (w: ProtobufWriter) => void): this {
    this.tag(field, 2);
    // Reserve one byte for the length, write the body in place, then widen the prefix if needed.
    this.ensure(1);
    const lengthAt = this.pos++;
    build(this);
    const length = this.pos - lengthAt - 1;
    const prefix = varintSize(length);
    if (prefix > 1) {
      this.ensure(prefix - 1);
      this.buf.copyWithin(lengthAt + prefix, lengthAt + 1, this.pos);
      this.pos += prefix - 1;
    }
    const end = this.pos;
    this.pos = lengthAt;
    this.varint(length);
    this.pos = end;
    return this;
  }
}

function varintSize(value: number): number {
  let size = 1;
  for (let v = value; v > 0x7f; v = Math.floor(v / 128)) size++;
  return size;
}
