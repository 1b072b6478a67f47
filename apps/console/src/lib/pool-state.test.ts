import { describe, expect, it } from 'vitest';
import { makeGroup } from '../test-support/make-group.ts';
import { classifyUtilization, describePoolState, readSlo } from './pool-state.ts';

describe('classifyUtilization', () => {
  it('applies the 1.2 / 0.8 utilization-ratio thresholds', () => {
    expect(classifyUtilization(1.21)).toBe('memory-bound');
    expect(classifyUtilization(1.2)).toBe('balanced');
    expect(classifyUtilization(0.8)).toBe('balanced');
    expect(classifyUtilization(0.79)).toBe('compute-bound');
    expect(classifyUtilization(null)).toBeNull();
  });
});

describe('describePoolState', () => {
  const slo = { ttftMs: 500, e2eMs: 5000 };
  it('is healthy inside the SLO', () => {
    expect(describePoolState(makeGroup(), slo).state).toBe('healthy');
  });
  it('names an SLO breach', () => {
    const status = describePoolState(makeGroup({ ttftMs: { p50: 300, p95: 900, p99: 1000 } }), slo);
    expect(status).toEqual({ state: 'slo-breach', reasons: ['TTFT p95 above the 500 ms SLO'] });
  });
  it('flags errors above 5%', () => {
    expect(describePoolState(makeGroup({ errorRate: 0.2 }), slo).state).toBe('errors');
  });
  it('calls a pool with replicas and no requests idle', () => {
    expect(describePoolState(makeGroup({ requests: 0 }), slo).state).toBe('idle');
  });
});

describe('readSlo', () => {
  it('reads camelCase or snake_case and tolerates absence', () => {
    expect(readSlo({ slo: { ttftMs: 800, e2eMs: null } })).toEqual({ ttftMs: 800, e2eMs: null });
    expect(readSlo({ slo: { ttft_ms: 700 } })).toEqual({ ttftMs: 700, e2eMs: null });
    expect(readSlo(null, null)).toEqual({ ttftMs: null, e2eMs: null });
    expect(readSlo(null, { ttftMs: 900, e2eMs: 9000 })).toEqual({ ttftMs: 900, e2eMs: 9000 });
  });
});
