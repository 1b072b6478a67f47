import { GovernorConfig } from '@governor/conventions';
import { describe, expect, test } from 'vitest';
import { applyRecord, createRecord, rememberAction } from './apply-record.ts';
import { type Candidate, createEmptyState } from './control-types.ts';
import { createEngineSettings } from './engine-settings.ts';
import { memoryKey } from './memory-key.ts';
import { createTickOutput } from './tick-output.ts';

const S = 1_000_000_000n;
const T0 = 1_700_000_000n * S;
const config = GovernorConfig.parse({
  pools: [
    { name: 'a', gpu_type: 'H100', model: 'm' },
    { name: 'b', gpu_type: 'A100', model: 'm' },
  ],
  slo: { ttft_ms: 2000 },
});
const settings = createEngineSettings(config, undefined, () => 0);

const scale = (from: number, to: number, extra: Partial<Candidate> = {}): Candidate =>
  ({
    kind: 'scale',
    target: { pool: 'b' },
    action: { from, to },
    direction: to > from ? 'increase' : 'decrease',
    reason: '',
    evidence: [],
    expectedImpact: {},
    confidence: 1,
    scopePools: ['b'],
    ...extra,
  }) as Candidate;

/** Pool b's share of m moves 0.5 → 1 (a fails) and b is sized for it, 2 → 5. */
function sizedForIncident() {
  const s = createEmptyState();
  s.actuated.weights.m = { a: 0.5, b: 0.5 };
  const apply = (c: Candidate, atNs: bigint) =>
    applyRecord(settings, s, createTickOutput(), null, createRecord(c, atNs), atNs, 'test', 'applied', '');
  apply(
    {
      kind: 'shift_traffic',
      target: { model: 'm', pool: 'a' },
      action: { weights: { a: 0, b: 1 } },
      direction: 'decrease',
      reason: '',
      evidence: [],
      expectedImpact: {},
      confidence: 1,
      scopePools: ['a', 'b'],
      cause: 'incident',
    },
    T0,
  );
  apply(scale(2, 5, { cause: 'incident', expectedImpact: { weight: { pool: 'b', from: 0.5, to: 1 } } }), T0);
  return { s, apply, memory: () => s.memory.get(memoryKey('scale', { pool: 'b' })) };
}

describe('the share a pool holds replicas for', () => {
  test('is recorded by a scale-up sized for a shift, with the weight and replicas before it', () => {
    const { memory } = sizedForIncident();
    expect(memory()?.forShare).toEqual({ model: 'm', baseWeight: 0.5, baseReplicas: 2, weight: 1 });
  });

  test('survives a scale-in, sized at the weight of the day, and keeps what carried the own share', () => {
    const { s, apply, memory } = sizedForIncident();
    s.actuated.weights.m = { a: 0.25, b: 0.75 };
    apply(scale(5, 4), T0 + 600n * S);
    expect(memory()?.forShare).toEqual({ model: 'm', baseWeight: 0.5, baseReplicas: 2, weight: 0.75 });
  });

  test("ends with a scale-up for the pool's own load, or when the scale-up is rolled back", () => {
    const grown = sizedForIncident();
    grown.apply(scale(5, 6), T0 + 600n * S);
    expect(grown.memory()?.forShare).toBeUndefined();

    const undone = sizedForIncident();
    const rec = [...undone.s.open.values()].find((r) => r.kind === 'scale')!;
    rememberAction(undone.s, rec, 'decrease', T0 + 600n * S);
    expect(undone.memory()?.forShare).toBeUndefined();
  });
});
