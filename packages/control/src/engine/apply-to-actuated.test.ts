import { describe, expect, test } from 'vitest';
import { applyToActuated, describePrevious } from './apply-to-actuated.ts';
import { createEmptyState } from './control-types.ts';

describe('actuated state and rollback actions', () => {
  test('the previous state of each kind is the action that restores it', () => {
    const { actuated } = createEmptyState();
    expect(describePrevious(actuated, 'scale', { pool: 'p' }, { from: 2, to: 5 }, undefined)).toEqual({
      from: 5,
      to: 2,
    });
    expect(describePrevious(actuated, 'circuit_break', { pool: 'p' }, { open: true }, undefined)).toEqual({
      open: false,
    });
    expect(describePrevious(actuated, 'shed_load', { model: 'm' }, { minPriority: 1 }, undefined)).toEqual({
      minPriority: null,
    });
    applyToActuated(actuated, 'shed_load', { model: 'm' }, { minPriority: 1 }, 0n, undefined);
    expect(describePrevious(actuated, 'shed_load', { model: 'm' }, { minPriority: 2 }, undefined)).toEqual({
      minPriority: 1,
    });
    const observed = { a: 0.6, b: 0.4 };
    expect(
      describePrevious(
        actuated,
        'shift_traffic',
        { model: 'm', pool: 'a' },
        { weights: { a: 0, b: 1 } },
        observed,
      ),
    ).toEqual({
      weights: observed,
    });
  });

  test('an incident shift opens a recovery that ends when the pool has its weight back', () => {
    const { actuated } = createEmptyState();
    const observed = { a: 0.6, b: 0.4 };
    applyToActuated(
      actuated,
      'shift_traffic',
      { model: 'm', pool: 'a' },
      { weights: { a: 0.2, b: 0.8 } },
      0n,
      observed,
      'incident',
    );
    expect(actuated.recovery.m).toEqual({ baseline: observed, pools: ['a'] });
    applyToActuated(
      actuated,
      'shift_traffic',
      { model: 'm', pool: 'a' },
      { weights: { a: 0.4, b: 0.6 } },
      1n,
      undefined,
      'recovery',
    );
    expect(actuated.recovery.m?.pools).toEqual(['a']);
    applyToActuated(
      actuated,
      'shift_traffic',
      { model: 'm', pool: 'a' },
      { weights: { a: 0.6, b: 0.4 } },
      2n,
      undefined,
      'recovery',
    );
    expect(actuated.recovery.m).toBeUndefined();
    // An efficiency shift moves weights without opening a recovery.
    applyToActuated(
      actuated,
      'shift_traffic',
      { model: 'm', pool: 'b' },
      { weights: { a: 0.7, b: 0.3 } },
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
      'circuit_break',
      { pool: 'p' },
      { open: true, durationS: 300 },
      1_000_000_000n,
      undefined,
    );
    expect(actuated.circuits.p).toEqual({ open: true, untilNs: 301_000_000_000n });
  });
});
