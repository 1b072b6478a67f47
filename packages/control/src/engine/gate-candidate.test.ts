import { ControlConfig, type KindAction, PolicyConfig } from '@governor/conventions';
import { describe, expect, test } from 'vitest';
import { gateCandidate } from './gate-candidate.ts';

const control = ControlConfig.parse({ cooldown_s: 300 });
const S = 1_000_000_000n;
const policy = (p: Record<string, unknown>) => PolicyConfig.parse({ name: 'p', auto_apply: true, ...p });
const base = {
  step: { kind: 'scale', action: { from: 2, to: 6 } } as KindAction,
  target: { pool: 'h100-east' },
  previous: { kind: 'scale', action: { from: 6, to: 2 } } as KindAction,
  confidence: 0.8,
  waits: null,
  atNs: 10_000n * S,
  control,
  memory: undefined,
  autoApplied: new Map<string, bigint[]>(),
};

describe('policy gate', () => {
  test('without a matching policy a recommendation waits for a human', () => {
    expect(gateCandidate({ ...base, policies: [] }).decision).toBe('propose');
    const other = gateCandidate({ ...base, policies: [policy({ match: { kind: ['shed_load'] } })] });
    expect(other).toMatchObject({ decision: 'propose', policy: null });
    const pattern = gateCandidate({ ...base, policies: [policy({ match: { target: 'pool=a100-*' } })] });
    expect(pattern.decision).toBe('propose');
  });

  test('the first matching policy decides; auto-apply is opt-in', () => {
    const manual = gateCandidate({
      ...base,
      policies: [policy({ name: 'manual', auto_apply: false }), policy({})],
    });
    expect(manual).toMatchObject({ decision: 'propose', policy: 'manual' });
    const auto = gateCandidate({
      ...base,
      policies: [policy({ match: { kind: ['scale'], target: 'pool=h100-*' } })],
    });
    expect(auto).toMatchObject({ decision: 'auto_apply', policy: 'p' });
  });

  test('below min_confidence it is only proposed', () => {
    const gate = gateCandidate({ ...base, confidence: 0.5, policies: [policy({ min_confidence: 0.7 })] });
    expect(gate.decision).toBe('propose');
    expect(gate.note).toContain('min_confidence 0.7');
  });

  test('a confidence that is not a number is below every min_confidence', () => {
    const gate = gateCandidate({
      ...base,
      confidence: Number.NaN,
      policies: [policy({ min_confidence: 0.5 })],
    });
    expect(gate.decision).toBe('propose');
  });

  test('a recommendation that waits (for a human, or to persist) is only proposed however confident, unless the policy applies everything', () => {
    const waits = 'it would buy fewer tasks within the SLO than it costs';
    const careful = policy({ min_confidence: 0.3 });
    const gate = gateCandidate({ ...base, confidence: 1, waits, policies: [careful] });
    expect(gate.decision).toBe('propose');
    expect(gate.note).toContain(waits);
    const dryRun = gateCandidate({
      ...base,
      confidence: 1,
      waits,
      policies: [policy({ min_confidence: 0.3, dry_run: true })],
    });
    expect(dryRun.decision).toBe('propose');
    expect(gateCandidate({ ...base, confidence: 1, policies: [careful] }).decision).toBe('auto_apply');
    // min_confidence 0 (the default) asks for nothing: everything Governor recommends is applied.
    expect(gateCandidate({ ...base, confidence: 0.1, waits, policies: [policy({})] }).decision).toBe(
      'auto_apply',
    );
  });

  test('inside the cooldown of the last action on the target it is only proposed', () => {
    const memory = {
      direction: 'increase' as const,
      appliedNs: base.atNs - 120n * S,
      recommendationId: 'r',
      expectReplicas: 2,
    };
    const inside = gateCandidate({ ...base, memory, policies: [policy({ cooldown_s: 300 })] });
    expect(inside.decision).toBe('propose');
    expect(inside.note).toContain('cooldown');
    const after = gateCandidate({
      ...base,
      memory: { ...memory, appliedNs: base.atNs - 301n * S },
      policies: [policy({ cooldown_s: 300 })],
    });
    expect(after.decision).toBe('auto_apply');
  });

  test('max_actions_per_hour limits auto-applied actions per policy', () => {
    const autoApplied = new Map([['p', [base.atNs - 600n * S, base.atNs - 3700n * S]]]);
    expect(
      gateCandidate({ ...base, autoApplied, policies: [policy({ max_actions_per_hour: 1 })] }).decision,
    ).toBe('propose');
    expect(
      gateCandidate({ ...base, autoApplied, policies: [policy({ max_actions_per_hour: 2 })] }).decision,
    ).toBe('auto_apply');
  });

  test('dry-run policies record what they would do without doing it', () => {
    const gate = gateCandidate({ ...base, policies: [policy({ dry_run: true })] });
    expect(gate.decision).toBe('dry_run');
  });

  test('max_step bounds replicas, weight points and downgrade share per action', () => {
    expect(gateCandidate({ ...base, policies: [policy({ max_step: 2 })] }).step).toEqual({
      kind: 'scale',
      action: { from: 2, to: 4 },
    });
    const shift = gateCandidate({
      ...base,
      step: { kind: 'shift_traffic', action: { weights: { a: 0, b: 1 } } },
      target: { model: 'm', pool: 'a' },
      previous: { kind: 'shift_traffic', action: { weights: { a: 0.6, b: 0.4 } } },
      policies: [policy({ max_step: 20 })],
    });
    expect(shift.step.action).toEqual({ weights: { a: 0.4, b: 0.6 } });
    const downgrade = gateCandidate({
      ...base,
      step: { kind: 'downgrade_model', action: { fromModel: 'big', toModel: 'small', fraction: 0.9 } },
      target: { model: 'big' },
      previous: { kind: 'downgrade_model', action: { fromModel: 'big', toModel: 'small', fraction: 0.1 } },
      policies: [policy({ max_step: 25 })],
    });
    expect(downgrade.step.action).toMatchObject({ fraction: 0.35 });
  });
});
