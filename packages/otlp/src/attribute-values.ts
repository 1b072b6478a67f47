import type { AttributeValue, Attributes } from './types.ts';

/** Sets an attribute; a key named `__proto__` becomes an own property instead of replacing the prototype. */
export function setAttribute(into: Record<string, AttributeValue>, key: string, value: AttributeValue): void {
  if (key === '__proto__')
    Object.defineProperty(into, key, { value, enumerable: true, writable: true, configurable: true });
  else into[key] = value;
}

// Emitters disagree on types (a priority as "2", a flag as "true"); coerce leniently, never throw.

export function toStringOrNull(value: AttributeValue | undefined): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value === '' ? null : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

export function toNumberOrNull(value: AttributeValue | undefined): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && value.trim() !== '') {
    const n = Number(value);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

const INT32_MAX = 2 ** 31 - 1;

export function toIntOrNull(value: AttributeValue | undefined): number | null {
  const n = toNumberOrNull(value);
  if (n === null) return null;
  const i = Math.round(n);
  return i > INT32_MAX || i < -INT32_MAX ? null : i;
}

export function toBoolOrNull(value: AttributeValue | undefined): boolean | null {
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 1 || value === '1') return true;
  if (value === 'false' || value === 0 || value === '0') return false;
  return null;
}

/** Seconds (float) to milliseconds, the unit vLLM's gen_ai.latency.* attributes use. */
export function secondsToMs(value: AttributeValue | undefined): number | null {
  const s = toNumberOrNull(value);
  return s === null || s < 0 ? null : s * 1000;
}

/** Copies aliased attributes to the names Governor understands, unless already present. */
export function applyAttributeAliases(
  attributes: Attributes,
  aliases: Readonly<Record<string, string>>,
): Attributes {
  let out: Attributes | null = null;
  for (const [from, to] of Object.entries(aliases)) {
    if (attributes[from] !== undefined && attributes[to] === undefined) {
      out ??= { ...attributes };
      out[to] = attributes[from]!;
    }
  }
  return out ?? attributes;
}
