import { GovernorConfig } from '@governor/conventions';
import { describe, expect, test } from 'vitest';
import { considerCandidate } from './consider-candidate.ts';
import { type Candidate, createEmptyState } from './control-types.ts';
import { createEngineSettings } from './engine-settings.ts';
import { createTickOutput } from './tick-output.ts';
import { toRecommendation } from './to-api.ts';
import { decisionKey, memoryKey } from './memory-key.ts';

const S = 1_000_000_000n;
const T0 = 1_700_000_000n * S;
const config = GovernorConfig.parse({
  pools: [{ name: 'h100-east', gpu_type: 'H100', model: 'llama-8b' }],
  slo: { ttft_ms: 2000 },
  control: { cooldown_s: 300 },
});
const settings = createEngineSettings(config, undefined, () => 0);

const scaleUp: Candidate = {
  kind: 'scale',
  target: { pool: 'h100-east' },
  action: { from: 2, to: 4 },
  direction: 'increase',
  reason: 'TTFT is queue-bound',
  evidence: [],
  expectedImpact: {},
  confidence: 0.6,
  scopePools: ['h100-east'],
};

describe('a guard holding an open recommendation', () => {
  test('is audited once when it starts, shown on the card while it lasts, and cleared when it ends', () => {
    const s = createEmptyState();
    const first = createTickOutput();
    considerCandidate(settings, s, first, null, [], scaleUp, T0);
    const [rec] = [...s.open.values()];
    expect(rec).toMatchObject({ state: 'proposed', hold: null });

    // An operator scales the pool in by hand: pushing the other way is barred for the cooldown.
    s.memory.set(memoryKey('scale', { pool: 'h100-east' }), {
      direction: 'decrease',
      appliedNs: T0 + 30n * S,
      recommendationId: 'external',
      expectReplicas: null,
    });
    const held = createTickOutput();
    considerCandidate(settings, s, held, null, [], scaleUp, T0 + 60n * S);
    expect(rec!.hold).toMatchObject({ rule: 'no_reversal_in_cooldown' });
    expect(toRecommendation(rec!).hold).toMatchObject({ rule: 'no_reversal_in_cooldown' });
    // Once decided it waits for nothing: the API shows no hold on it.
    expect(toRecommendation({ ...rec!, state: 'rejected' }).hold).toBeNull();
    expect(held.touched.has(rec!.id)).toBe(true);
    expect(held.audit).toEqual([
      expect.objectContaining({
        decision: 'held',
        actor: 'guard:no_reversal_in_cooldown',
        recommendationId: rec!.id,
        kind: 'scale',
        target: { pool: 'h100-east' },
        result: 'kept waiting',
      }),
    ]);

    const stillHeld = createTickOutput();
    considerCandidate(settings, s, stillHeld, null, [], scaleUp, T0 + 90n * S);
    expect(stillHeld.audit).toEqual([]);
    expect(rec!.hold?.rule).toBe('no_reversal_in_cooldown');

    const afterCooldown = createTickOutput();
    considerCandidate(settings, s, afterCooldown, null, [], scaleUp, T0 + 331n * S);
    expect(rec!.hold).toBeNull();
    expect(rec!.state).toBe('proposed');
    expect(afterCooldown.touched.has(rec!.id)).toBe(true);
    expect(afterCooldown.audit.filter((a) => a.decision === 'held')).toEqual([]);
    expect(s.holds.size).toBe(0);
  });

  test('a candidate with no open recommendation is held in the audit only', () => {
    const s = createEmptyState();
    s.rejected.set(decisionKey('scale', { pool: 'h100-east' }, 'increase'), T0);
    const out = createTickOutput();
    considerCandidate(settings, s, out, null, [], scaleUp, T0 + 30n * S);
    expect(s.open.size).toBe(0);
    expect(out.audit).toEqual([
      expect.objectContaining({
        decision: 'held',
        actor: 'guard:rejected_recently',
        recommendationId: null,
        result: 'not proposed',
      }),
    ]);
  });
});
