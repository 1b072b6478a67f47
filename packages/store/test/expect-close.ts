import { expect } from 'vitest';

// Two engines' answers compared: the same shape and values, numbers to 1e-9 of their size (the
// engines add floating-point sums in other orders).

/** Equal, numbers to 1e-9 of their size (the engines add floating-point sums in other orders). */
export function expectClose(actual: unknown, expected: unknown, path: string): void {
  if (typeof expected === 'number' && typeof actual === 'number') {
    expect(Math.abs(actual - expected), path).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(expected)));
    return;
  }
  if (Array.isArray(expected)) {
    expect(Array.isArray(actual), path).toBe(true);
    expect((actual as unknown[]).length, `${path}.length`).toBe(expected.length);
    expected.forEach((e, i) => {
      expectClose((actual as unknown[])[i], e, `${path}[${i}]`);
    });
    return;
  }
  if (expected !== null && typeof expected === 'object') {
    expect(actual !== null && typeof actual === 'object', path).toBe(true);
    const a = actual as Record<string, unknown>;
    expect(Object.keys(a).sort(), `${path} keys`).toEqual(Object.keys(expected).sort());
    for (const [k, v] of Object.entries(expected)) expectClose(a[k], v, `${path}.${k}`);
    return;
  }
  expect(actual, path).toEqual(expected);
}
