import { describe, expect, it } from 'vitest';
import { isSignalPath } from './signal-paths.ts';

describe('isSignalPath', () => {
  it('accepts listed signals and hop paths, nothing else', () => {
    expect(isSignalPath('ttftMs.p95')).toBe(true);
    expect(isSignalPath('costPerSuccessfulTaskUsd')).toBe(true);
    expect(isSignalPath('hops.queue.p95')).toBe(true);
    expect(isSignalPath('hops.other.shareOfTtft')).toBe(true);
    expect(isSignalPath('hops.teleport.p95')).toBe(false);
    expect(isSignalPath('hops.queue.p99')).toBe(false);
    expect(isSignalPath('ttft.p95')).toBe(false);
    expect(isSignalPath('key')).toBe(false);
  });
});
