import { describe, expect, it } from 'vitest';
import {
  encodeExportResponseJson,
  encodeExportResponseProtobuf,
  encodeRpcStatusJson,
  encodeRpcStatusProtobuf,
} from './encode-responses.ts';
import { ProtobufReader } from './protobuf-reader.ts';

describe('OTLP response bodies', () => {
  it('an all-accepted export answers with an empty message', () => {
    expect(encodeExportResponseProtobuf({ signal: 'traces', rejected: 0, errorMessage: '' })).toHaveLength(0);
    expect(encodeExportResponseJson({ signal: 'traces', rejected: 0, errorMessage: '' })).toBe('{}');
  });

  it('partial success carries the rejected count and the reason (protobuf field 1: {1: count, 2: message})', () => {
    const bytes = encodeExportResponseProtobuf({ signal: 'traces', rejected: 3, errorMessage: 'bad ids' });
    const r = new ProtobufReader(bytes);
    expect(r.tag()).toBe((1 << 3) | 2);
    r.enter();
    expect(r.tag()).toBe(1 << 3);
    expect(r.varint32()).toBe(3);
    expect(r.tag()).toBe((2 << 3) | 2);
    expect(r.string()).toBe('bad ids');
    expect(
      JSON.parse(encodeExportResponseJson({ signal: 'metrics', rejected: 2, errorMessage: 'x' })),
    ).toEqual({
      partialSuccess: { rejectedDataPoints: '2', errorMessage: 'x' },
    });
  });

  it('google.rpc.Status has the gRPC code and the message', () => {
    const r = new ProtobufReader(encodeRpcStatusProtobuf(3, 'cannot decode'));
    expect(r.tag()).toBe(1 << 3);
    expect(r.varint32()).toBe(3);
    expect(r.tag()).toBe((2 << 3) | 2);
    expect(r.string()).toBe('cannot decode');
    expect(JSON.parse(encodeRpcStatusJson(3, 'cannot decode'))).toEqual({
      code: 3,
      message: 'cannot decode',
      details: [],
    });
  });
});
