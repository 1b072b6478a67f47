import type { ProtobufWriter } from './protobuf-writer.ts';
import type { AttributeValue, Attributes } from './types.ts';

/** Writes a repeated KeyValue field (attributes of a resource, span, event or data point). */
export function writeAttributes(w: ProtobufWriter, field: number, attributes: Attributes): void {
  for (const [key, value] of Object.entries(attributes)) {
    w.message(field, (kv) => {
      kv.string(1, key);
      kv.message(2, (av) => writeAnyValue(av, value));
    });
  }
}

function writeAnyValue(w: ProtobufWriter, value: AttributeValue): void {
  if (value === null) return;
  if (typeof value === 'string') {
    w.stringAlways(1, value);
    return;
  }
  if (typeof value === 'boolean') {
    w.varintAlways(2, value ? 1 : 0);
    return;
  }
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value)) w.varintAlways(3, BigInt(value));
    else w.double(4, value);
    return;
  }
  if (Array.isArray(value)) {
    w.message(5, (arr) => {
      for (const item of value) arr.message(1, (av) => writeAnyValue(av, item));
    });
    return;
  }
  w.message(6, (list) => writeAttributes(list, 1, value));
}
