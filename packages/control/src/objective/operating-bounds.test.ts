import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TUNING } from '../engine/control-tuning.ts';
import {
  calmErrorRate,
  collapseShare,
  errorBudget,
  roomUtilization,
  scaleUpUtilization,
} from './operating-bounds.ts';

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

  it('calm failures are clearly inside the error budget, for any target and slowRatio', () => {
    expect(calmErrorRate({ slo_attainment_target: 0.95 }, DEFAULT_TUNING)).toBe(0.025);
    fc.assert(
      fc.property(
        fc.double({ min: 0.5, max: 0.999, noNaN: true }),
        fc.double({ min: 1.01, max: 10, noNaN: true }),
        (target, slowRatio) => {
          const calm = calmErrorRate({ slo_attainment_target: target }, { slowRatio });
          return calm > 0 && calm < errorBudget({ slo_attainment_target: target });
        },
      ),
    );
  });

  it("a peer's room is clearly below the utilization pools are sized for, and grows with it", () => {
    expect(roomUtilization({ target_utilization: 0.7 }, DEFAULT_TUNING)).toBeCloseTo(0.538, 3);
    fc.assert(
      fc.property(
        fc.double({ min: 0.05, max: 0.99, noNaN: true }),
        fc.double({ min: 0.05, max: 0.99, noNaN: true }),
        fc.double({ min: 1.01, max: 3, noNaN: true }),
        (a, b, usualRatio) => {
          const [lo, hi] = a < b ? [a, b] : [b, a];
          const room = (t: number) => roomUtilization({ target_utilization: t }, { usualRatio });
          return room(hi) < hi && room(lo) <= room(hi);
        },
      ),
    );
  });
});
