import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TUNING } from '../engine/control-tuning.ts';
import { collapseShare, errorBudget, scaleUpUtilization } from './operating-bounds.ts';

describe('operating bounds from the objective knobs', () => {
  it('the error budget is what the attainment target leaves, exact enough that 1 failure in 20 is at it', () => {
    expect(errorBudget({ slo_attainment_target: 0.95 })).toBe(0.05);
    expect(1 / 20 >= errorBudget({ slo_attainment_target: 0.95 })).toBe(true);
    expect(errorBudget({ slo_attainment_target: 0.99 })).toBe(0.01);
    fc.assert(
      fc.property(
        fc.double({ min: 0.5, max: 1, noNaN: true }),
        fc.double({ min: 0.5, max: 1, noNaN: true }),
        (a, b) => {
          // A stricter target leaves a smaller budget.
          const [lo, hi] = a < b ? [a, b] : [b, a];
          return errorBudget({ slo_attainment_target: hi }) <= errorBudget({ slo_attainment_target: lo });
        },
      ),
    );
  });

  it('a pool is scaled up only past the utilization it is sized for, and before it saturates', () => {
    expect(scaleUpUtilization({ target_utilization: 0.7 })).toBe(0.85);
    fc.assert(
      fc.property(fc.double({ min: 0.05, max: 0.99, noNaN: true }), (target) => {
        const trigger = scaleUpUtilization({ target_utilization: target });
        return trigger > target && trigger < 1;
      }),
    );
  });

  it('a collapse is clearly past the whole error budget, for any target and slowRatio', () => {
    expect(collapseShare({ slo_attainment_target: 0.95 }, DEFAULT_TUNING)).toBe(0.1);
    fc.assert(
      fc.property(
        fc.double({ min: 0.5, max: 0.999, noNaN: true }),
        fc.double({ min: 1.01, max: 10, noNaN: true }),
        (target, slowRatio) =>
          collapseShare({ slo_attainment_target: target }, { slowRatio }) >
          errorBudget({ slo_attainment_target: target }),
      ),
    );
  });
});
