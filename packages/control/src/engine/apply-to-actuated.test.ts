import { describe, expect, test } from 'vitest';
import { applyToActuated, describePrevious } from './apply-to-actuated.ts';
import { createEmptyState } from './control-types.ts';

describe('actuated state and rollback actions', () => {
  test('the previous state of each kind is the action that restores it', () => {
    const { actuated } = createEmptyState();
    expect(
      describePrevious(actuated, { kind: 'scale', action: { from: 2, to: 5 } }, { pool: 'p' }, undefined),
    ).toEqual({
      kind: 'scale',
      action: { from: 5, to: 2 },
    });
    expect(
      describePrevious(actuated, { kind: 'circuit_break', action: { open: true } }, { pool: 'p' }, undefined),
    ).toEqual({
      kind: 'circuit_break',
      action: { open: false },
    });
    expect(
      describePrevious(
        actuated,
        { kind: 'shed_load', action: { minPriority: 1 } },
        { model: 'm' },
        undefined,
      ),
    ).toEqual({
      kind: 'shed_load',
      action: { minPriority: null },
    });
    applyToActuated(
      actuated,
      { kind: 'shed_load', action: { minPriority: 1 } },
      { model: 'm' },
      0n,
      undefined,
    );
    expect(
      describePrevious(
        actuated,
        { kind: 'shed_load', action: { minPriority: 2 } },
        { model: 'm' },
        undefined,
      ),
    ).toEqual({
      kind: 'shed_load',
      action: { minPriority: 1 },
    });
    const observed = { a: 0.6, b: 0.4 };
    expect(
      describePrevious(
        actuated,
        { kind: 'shift_traffic', action: { weights: { a: 0, b: 1 } } },
        { model: 'm', pool: 'a' },
        observed,
      ),
    ).toEqual({ kind: 'shift_traffic', action: { weights: observed } });
  });

  test('an incident shift opens a recovery that ends when the pool has its weight back', () => {
    const { actuated } = createEmptyState();
    const observed = { a: 0.6, b: 0.4 };
    applyToActuated(
      actuated,
      { kind: 'shift_traffic', action: { weights: { a: 0.2, b: 0.8 } } },
      { model: 'm', pool: 'a' },
      0n,
      observed,
      'incident',
    );
    expect(actuated.recovery.m).toEqual({ baseline: observed, pools: ['a'] });
    applyToActuated(
      actuated,
      { kind: 'shift_traffic', action: { weights: { a: 0.4, b: 0.6 } } },
      { model: 'm', pool: 'a' },
      1n,
      undefined,
      'recovery',
    );
    expect(actuated.recovery.m?.pools).toEqual(['a']);
    applyToActuated(
      actuated,
      { kind: 'shift_traffic', action: { weights: { a: 0.6, b: 0.4 } } },
      { model: 'm', pool: 'a' },
      2n,
      undefined,
      'recovery',
    );
    expect(actuated.recovery.m).toBeUndefined();
    // An efficiency shift moves weights without opening a recovery.
    applyToActuated(
      actuated,
      { kind: 'shift_traffic', action: { weights: { a: 0.7, b: 0.3 } } },
      { model: 'm', pool: 'b' },
      3n,
      undefined,
      'efficiency',
    );
    expect(actuated.recovery.m).toBeUndefined();
    expect(actuated.weights.m).toEqual({ a: 0.7, b: 0.3 });
  });

  test('a breaker remembers until when it is open', () => {
    const { actuated } = createEmptyState();
    applyToActuated(
      actuated,
      { kind: 'circuit_break', action: { open: true, durationS: 300 } },
      { pool: 'p' },
      1_000_000_000n,
      undefined,
    );
    expect(actuated.circuits.p).toEqual({ open: true, untilNs: 301_000_000_000n });
  });
});
