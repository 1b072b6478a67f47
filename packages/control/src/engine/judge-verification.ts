import type { ExpectedImpact, SloConfig } from '@governor/conventions';
import type { RecommendationRecord, ScopeMetrics } from './control-types.ts';

// After control.verify_after_s, an applied action is judged on its scope (the pools it was meant to
// help): kept ("verified") unless things got worse in the way that action could cause, in which
// case it is rolled back. "Worse" is specific per kind — a scale-in that breaks the SLO, a breaker
// that leaves the model with less goodput and no fewer errors, a scale-up whose replicas fail requests.

export interface VerificationJudgement {
  verdict: 'verified' | 'rolled_back';
  summary: string;
}

const GOODPUT_DROP = 0.03;
/** Requests per second this many times the rate when a scale-up was applied: new load, not new replicas. */
const LOAD_RISE = 1.5;

/**
 * A drop in a rate (goodput) that is more than noise: at least `floor` and at least two standard
 * errors of the difference of two proportions over the samples behind them.
 */
function fellBeyondNoise(
  before: number,
  after: number,
  nBefore: number,
  nAfter: number,
  floor: number,
): boolean {
  const p = (before * nBefore + after * nAfter) / Math.max(1, nBefore + nAfter);
  const se = Math.sqrt(Math.max(0, p * (1 - p)) * (1 / Math.max(1, nBefore) + 1 / Math.max(1, nAfter)));
  return before - after > Math.max(floor, 2 * se);
}

/**
 * The drop in the share of tasks within the SLO the action was predicted to cost
 * (`expectedImpact.withinSloShare`, the scale-in's pool model), or 0 when it predicted none.
 */
export function predictedShareDrop(expectedImpact: ExpectedImpact): number {
  const share = expectedImpact.withinSloShare;
  if (typeof share?.from !== 'number' || typeof share.to !== 'number') return 0;
  return Math.max(0, share.from - share.to);
}

/** The bounds verification reads off the objective knobs (operating-bounds.ts). */
export interface VerificationBounds {
  /** errorBudget: a retry budget that raises errors by more than this while goodput does not rise did harm. */
  errorBudget: number;
  /** collapseShare: a fall of goodput this large is not excused by fewer errors. */
  collapse: number;
  /** calmErrorRate: errors that rose by more than this rose for a reason (the action, if it could). */
  calm: number;
}

export function judgeVerification(
  rec: RecommendationRecord,
  before: ScopeMetrics,
  after: ScopeMetrics,
  slo: SloConfig,
  minRequests: number,
  bounds: VerificationBounds,
  /** The scope's requests per second since the action over when it was applied; null if unknown. */
  loadRatio: number | null = null,
): VerificationJudgement {
  if (after.requests < minRequests) {
    return {
      verdict: 'verified',
      summary: `only ${after.requests} requests in scope since; nothing measurably worse`,
    };
  }
  if (before.requests < minRequests) {
    return {
      verdict: 'verified',
      summary: `only ${before.requests} requests in scope when it was applied; no baseline to compare with`,
    };
  }
  const dGood = before.goodput !== null && after.goodput !== null ? after.goodput - before.goodput : null;
  const dErr =
    before.errorRate !== null && after.errorRate !== null ? after.errorRate - before.errorRate : null;
  const sloMs = slo.ttft_ms ?? null;
  const goodputFell =
    before.goodput !== null &&
    after.goodput !== null &&
    fellBeyondNoise(before.goodput, after.goodput, before.requests, after.requests, GOODPUT_DROP);
  const sloBroken =
    sloMs !== null && after.ttftP95Ms !== null && after.ttftP95Ms > sloMs && (before.ttftP95Ms ?? 0) <= sloMs;
  const fmt = (v: number | null, digits = 3) =>
    v === null ? 'n/a' : String(Math.round(v * 10 ** digits) / 10 ** digits);
  const predicted = rec.expectedImpact?.withinSloShare?.to;
  const delta = `goodput ${fmt(before.goodput)} → ${fmt(after.goodput)}${typeof predicted === 'number' ? ` (predicted ${fmt(predicted)})` : ''}, error rate ${fmt(before.errorRate)} → ${fmt(after.errorRate)}, TTFT p95 ${fmt(before.ttftP95Ms, 0)} → ${fmt(after.ttftP95Ms, 0)} ms`;

  let worse: string | null = null;
  switch (rec.kind) {
    case 'scale':
      if (rec.direction === 'decrease') {
        // Held to its prediction: goodput may fall by what the replay said fewer replicas would
        // cost, and no further than noise beyond it.
        const expectedDrop = predictedShareDrop(rec.expectedImpact ?? {});
        const beyondPrediction =
          before.goodput !== null &&
          after.goodput !== null &&
          fellBeyondNoise(
            before.goodput - expectedDrop,
            after.goodput,
            before.requests,
            after.requests,
            GOODPUT_DROP,
          );
        if (beyondPrediction || sloBroken)
          worse =
            expectedDrop > 0
              ? `fewer replicas could not hold the SLO (predicted within-SLO share −${fmt(expectedDrop)})`
              : 'fewer replicas could not hold the SLO';
      } else if (goodputFell && dErr !== null && dErr > bounds.calm) {
        // More capacity does not hurt by itself; new replicas that fail requests do. Capacity that
        // turns out unneeded is the scale-in policy's to take back, with its hysteresis. Unless the
        // pool's load rose with them (traffic moved onto it, a surge): then the load failed the
        // requests, and taking the replicas back would leave it with less for more.
        if (loadRatio !== null && loadRatio >= LOAD_RISE) {
          return {
            verdict: 'verified',
            summary: `its requests per second rose ${Math.round(loadRatio * 10) / 10}× since: the load, not the new replicas, cut goodput (${delta})`,
          };
        }
        worse = 'goodput fell and errors rose after the new replicas joined';
      }
      break;
    case 'circuit_break':
    case 'shift_traffic':
      if (rec.direction === 'decrease' || rec.kind === 'circuit_break') {
        // Fewer errors are no excuse for a collapse: the peers could not carry the traffic.
        if (goodputFell && (dErr === null || dErr >= -0.005 || (dGood !== null && -dGood > bounds.collapse)))
          worse = 'moving traffic away cut goodput (the peers could not carry it, or errors did not fall)';
      } else if (goodputFell || (dErr !== null && dErr > bounds.calm)) {
        worse = 'traffic given back to the pool raised errors or cut goodput';
      }
      break;
    case 'shed_load':
      if (rec.direction === 'increase' ? goodputFell : goodputFell || sloBroken) {
        worse =
          rec.direction === 'increase'
            ? 'shedding did not help admitted tasks'
            : 'readmitted tasks pushed the pools past the SLO';
      }
      break;
    case 'retry_budget':
      if (
        rec.direction === 'increase'
          ? // Refused retries count as errors; they are harm only when goodput did not rise with them.
            (dErr !== null && dErr > bounds.errorBudget && (dGood === null || dGood <= 0)) ||
            (dGood !== null && -dGood > bounds.errorBudget)
          : dErr !== null && dErr > bounds.calm
      ) {
        worse =
          rec.direction === 'increase'
            ? 'the retry budget turned recoverable failures into failed tasks'
            : 'errors rose once retries were free again';
      }
      break;
    case 'downgrade_model':
      if (
        goodputFell ||
        (dErr !== null && dErr > bounds.calm) ||
        (rec.direction === 'decrease' && sloBroken)
      ) {
        worse =
          rec.direction === 'increase'
            ? 'the smaller model could not carry the moved tasks'
            : 'tasks moved back pushed the model past its SLO';
      }
      break;
  }
  return worse
    ? { verdict: 'rolled_back', summary: `${worse} (${delta})` }
    : { verdict: 'verified', summary: `no harm seen (${delta})` };
}
