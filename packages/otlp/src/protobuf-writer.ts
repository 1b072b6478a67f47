// A minimal protobuf wire-format writer for OTLP responses, google.rpc.Status and test fixtures.

export class ProtobufWriter {
  private chunks: number[] = [];

  bytesOut(): Uint8Array {
    return Uint8Array.from(this.chunks);
  }

  private varint(value: number | bigint): void {
    let v = BigInt.asUintN(64, BigInt(value));
    while (v > 0x7fn) {
      this.chunks.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    this.chunks.push(Number(v));
  }

  private tag(field: number, wire: number): void {
    this.varint((field << 3) | wire);
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
    this.tag(field, 1);
    const buf = Buffer.alloc(8);
    buf.writeBigUInt64LE(BigInt.asUintN(64, value));
    this.chunks.push(...buf);
    return this;
  }

  double(field: number, value: number): this {
    this.tag(field, 1);
    const buf = Buffer.alloc(8);
    buf.writeDoubleLE(value);
    this.chunks.push(...buf);
    return this;
  }

  bytes(field: number, value: Uint8Array): this {
    if (value.length === 0) return this;
    this.tag(field, 2);
    this.varint(value.length);
    for (const b of value) this.chunks.push(b);
    return this;
  }

  /** Writes the field even when empty (a oneof member must be present to be set). */
  stringAlways(field: number, value: string): this {
    const bytes = Buffer.from(value, 'utf8');
    this.tag(field, 2);
    this.varint(bytes.length);
    for (const b of bytes) this.chunks.push(b);
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, Buffer.from(value, 'utf8'));
  }

  message(field: number, build: (w: ProtobufWriter) => void): this {
    const sub = new ProtobufWriter();
    build(sub);
    this.tag(field, 2);
    const out = sub.bytesOut();
    this.varint(out.length);
    for (const b of out) this.chunks.push(b);
    return this;
  }
}
