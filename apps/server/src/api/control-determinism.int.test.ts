import { createHash } from 'node:crypto';
import type { Recommendation } from '@governor/conventions';
import { describe, expect, it } from 'vitest';
import { type TestGovernor, startTestGovernor } from './fixtures/control-test-governor.ts';
import { type PoolTraffic, T0_MS, buildGauges, buildTraces } from './fixtures/fleet-telemetry.ts';

// Decisions are a function of the telemetry alone: the same spans and gauges with other trace and
// span ids (as two runs of one fleet get from their random id generators) give the same
// recommendations. The traffic holds what ids could break a tie in: requests of one pool arriving
// at the same instant with different prompts (the order a scale-in's replay serves them in), and
// a pool failing next to a healthy peer.

const POOLS = [
  { name: 'pair-a', gpu_type: 'H100', model: 'm-pair', region: 'us-east' },
  { name: 'pair-b', gpu_type: 'H100', model: 'm-pair', region: 'us-west' },
];

/** pair-a's traffic is two streams that start together: each instant brings a short and a long prompt. */
const PAIR_A_SHORT: PoolTraffic = {
  pool: 'pair-a',
  model: 'm-pair',
  replicas: 2,
  ratePerS: 1,
  inputTokens: 800,
};
const PAIR_A_LONG: PoolTraffic = { ...PAIR_A_SHORT, inputTokens: 1200 };
const PAIR_B: PoolTraffic = { pool: 'pair-b', model: 'm-pair', region: 'us-west', replicas: 2, ratePerS: 2 };

/** A phase of traffic: what each pool serves for [fromMs, toMs) after T0. */
interface Phase {
  fromMs: number;
  toMs: number;
  traffic: PoolTraffic[];
}

const PHASES: Phase[] = [
  { fromMs: 0, toMs: 330_000, traffic: [PAIR_A_SHORT, PAIR_A_LONG, PAIR_B] },
  { fromMs: 330_000, toMs: 420_000, traffic: [PAIR_A_SHORT, PAIR_A_LONG, { ...PAIR_B, errorRate: 0.3 }] },
];

/** Every id in an OTLP/JSON trace export replaced by a hash of it under `salt`. */
function reidentify(body: unknown, salt: string): unknown {
  const map = (id: string, length: number) =>
    id === '' ? id : createHash('sha256').update(`${salt}:${id}`).digest('hex').slice(0, length);
  const json = JSON.stringify(body, (key, value) => {
    if (key === 'traceId' && typeof value === 'string') return map(value, 32);
    if ((key === 'spanId' || key === 'parentSpanId') && typeof value === 'string') return map(value, 16);
    return value;
  });
  return JSON.parse(json);
}

async function post(url: string, body: unknown): Promise<void> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`POST ${url} → ${response.status}: ${await response.text()}`);
}

/** What a user reads on a recommendation card, tick by tick. */
type Decision = Pick<Recommendation, 'kind' | 'target' | 'action' | 'confidence' | 'reason' | 'state'>;

/** Runs the phases through a fresh Governor with ids salted by `salt`; its recommendations per tick. */
async function decide(salt: string): Promise<Decision[][]> {
  let g: TestGovernor | null = null;
  try {
    g = await startTestGovernor({ pools: POOLS });
    const ticks: Decision[][] = [];
    for (const phase of PHASES) {
      const from = T0_MS + phase.fromMs;
      const to = T0_MS + phase.toMs;
      await post(`${g.url}/v1/traces`, reidentify(buildTraces(phase.traffic, from, to), salt));
      // One gauge stream per pool (the two streams of pair-a are one pool's traffic).
      const gauged = phase.traffic.filter((t) => t !== PAIR_A_LONG);
      await post(`${g.url}/v1/metrics`, buildGauges(gauged, from, to));
      for (let t = Math.ceil((phase.fromMs + 1) / 30_000) * 30_000; t <= phase.toMs; t += 30_000) {
        const { recommendations } = await g.evaluate(T0_MS + t);
        ticks.push(
          recommendations.map((r) => ({
            kind: r.kind,
            target: r.target,
            action: r.action,
            confidence: r.confidence,
            reason: r.reason,
            state: r.state,
          })),
        );
      }
    }
    return ticks;
  } finally {
    await g?.close();
  }
}

describe('control decisions and trace ids', () => {
  it('recommends the same actions, confidences and reasons for the same telemetry under other ids', async () => {
    const first = await decide('run-1');
    const second = await decide('run-2');
    const all = first.flat();
    // The telemetry shows conditions to act on: a scale-in replayed over tied arrivals, and the
    // failing pool's circuit break or shift.
    expect(
      all.some((d) => d.kind === 'scale' && d.target.pool === 'pair-a' && /replayed/.test(d.reason)),
    ).toBe(true);
    expect(all.some((d) => d.kind !== 'scale' && d.target.pool === 'pair-b')).toBe(true);
    expect(second).toEqual(first);
  }, 240_000);
});
