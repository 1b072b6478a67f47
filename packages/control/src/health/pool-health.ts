// A pool against its peers, as statistical tests rather than thresholds. Two questions, each with a
// test whose significance is the confidence:
//   - Does it fail more of its requests than the peers serving the same model? Only faults count:
//     timeouts and rejections are what a pool short of capacity produces by itself (its own backlog
//     makes clients give up), so they say "add capacity", not "this pool is broken". A one-sided
//     two-proportion z-test of the pool's fault share against the peers' pooled share.
//   - Do its engines take longer for their work than its own healthy history predicts, when its
//     peers' do not? The ratio of busy time to the engine-time fit's prediction, compared with the
//     peers' ratios.
// The answer is an effective capacity: the share of a healthy replica's good work one of its
// replicas delivers (1 = healthy). The allocator spreads a model's traffic by capacity × replicas,
// so a degraded pool loses share in proportion to how degraded it is, and only as surely as the
// tests are.

export interface PoolHealthInput {
  pool: string;
  /** Requests judged (sampling weights applied). */
  requests: number;
  /** Their failures, all kinds. */
  errors: number;
  /** Of those, timeouts and rejections (overloadRate × requests). */
  overloadErrors: number;
  /** Engine busy time ÷ what its healthy fit predicts for the work done; null without a fit. */
  engineSlowdown: number | null;
}

export interface Health {
  pool: string;
  /** Good work per replica relative to a healthy one, in (0, 1]. */
  capacityFactor: number;
  /** How sure the tests are that the pool is degraded (0 = no evidence, → 1 = certain). */
  confidence: number;
  /** Faults per request beyond the peers' share (0 when not higher). */
  excessFaultShare: number;
  /** One sentence an operator understands, or null when healthy. */
  why: string | null;
}

/**
 * Each pool's health against the others in `peers` (the pools serving the same model). A pool
 * without peers is judged against nothing and stays healthy: with no alternative, a lower capacity
 * could only move traffic nowhere.
 */
export function judgeHealth(peers: readonly PoolHealthInput[]): Health[] {
  return peers.map((p) =>
    judgeOne(
      p,
      peers.filter((q) => q.pool !== p.pool),
    ),
  );
}

function judgeOne(p: PoolHealthInput, others: readonly PoolHealthInput[]): Health {
  const healthy: Health = { pool: p.pool, capacityFactor: 1, confidence: 0, excessFaultShare: 0, why: null };
  if (others.length === 0) return healthy;
  const faults = Math.max(0, p.errors - p.overloadErrors);
  const peerRequests = others.reduce((s, q) => s + q.requests, 0);
  const peerFaults = others.reduce((s, q) => s + Math.max(0, q.errors - q.overloadErrors), 0);
  const byFaults = faultTest(faults, p.requests, peerFaults, peerRequests);
  const bySpeed = speedTest(p, others);
  const factor = Math.min(byFaults.factor, bySpeed.factor);
  const confidence = Math.max(byFaults.confidence, bySpeed.confidence);
  if (factor >= 1 || confidence === 0) return healthy;
  const why = [byFaults.why, bySpeed.why].filter((w) => w !== null).join('; ');
  return {
    pool: p.pool,
    capacityFactor: factor,
    confidence,
    excessFaultShare: byFaults.excess,
    why: why || null,
  };
}

interface TestResult {
  factor: number;
  confidence: number;
  /** The test's z score (0 when not judged). */
  z: number;
  excess: number;
  why: string | null;
}

const NONE: TestResult = { factor: 1, confidence: 0, z: 0, excess: 0, why: null };

/** One-sided two-proportion z-test: is the pool's fault share above its peers'? */
export function faultTest(
  faults: number,
  requests: number,
  peerFaults: number,
  peerRequests: number,
): TestResult {
  if (requests <= 0 || peerRequests <= 0) return NONE;
  const p1 = faults / requests;
  const p2 = peerFaults / peerRequests;
  if (p1 <= p2) return NONE;
  const pooled = (faults + peerFaults) / (requests + peerRequests);
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / requests + 1 / peerRequests));
  const z = se > 0 ? (p1 - p2) / se : Number.POSITIVE_INFINITY;
  const confidence = significance(z);
  // A replica that fails a share p of its work delivers 1 − p of a healthy one's good work.
  const factor = (1 - p1) / (1 - p2);
  return {
    factor,
    confidence,
    z,
    excess: p1 - p2,
    why: `${pct(p1)} of its requests fail for reasons other than load against ${pct(p2)} on its peers (z = ${z.toFixed(1)})`,
  };
}

/** Is the pool's engine slowdown beyond its peers' (each against its own healthy fit)? */
function speedTest(p: PoolHealthInput, others: readonly PoolHealthInput[]): TestResult {
  const mine = p.engineSlowdown;
  const theirs = others.map((q) => q.engineSlowdown).filter((v): v is number => v !== null && v > 0);
  if (mine === null || !(mine > 0) || theirs.length === 0) return NONE;
  // The peers' ratios show how much the fit wanders for healthy engines (load, prompt mix): their
  // spread in log space, with a floor so two identical peers do not make any deviation certain.
  const logs = theirs.map(Math.log);
  const mean = logs.reduce((s, v) => s + v, 0) / logs.length;
  const spread = Math.sqrt(logs.reduce((s, v) => s + (v - mean) ** 2, 0) / logs.length);
  const sd = Math.max(spread, LOG_SPREAD_FLOOR);
  const z = (Math.log(mine) - mean) / sd;
  if (z <= 0) return NONE;
  const relative = Math.exp(Math.log(mine) - mean);
  return {
    factor: Math.min(1, 1 / relative),
    confidence: significance(z),
    z,
    excess: 0,
    why: `its engines take ${relative.toFixed(2)}× the time its peers' do for the same work (each against its own healthy history)`,
  };
}

/**
 * The least spread assumed for healthy engines' busy time around their fits (log scale, about
 * ±10 %): a stated prior, so that two peers that happen to agree exactly do not make any deviation
 * from them certain. The peers' measured spread replaces it when larger.
 */
const LOG_SPREAD_FLOOR = 0.1;

/** One-sided confidence from a z score: Φ(z) mapped to [0, 1) as 2Φ(z) − 1, so z = 0 gives none. */
export function significance(z: number): number {
  if (!(z > 0)) return 0;
  if (!Number.isFinite(z)) return 1;
  return 2 * normalCdf(z) - 1;
}

/**
 * P(X ≥ k) for X ~ Binomial(n, p): how likely k or more failures of n requests are if each fails with
 * probability p. Exact (the terms summed upward from k in log space), so it holds at a handful of
 * requests where a normal approximation does not.
 */
export function binomialUpperTail(k: number, n: number, p: number): number {
  const trials = Math.round(n);
  const from = Math.ceil(k);
  if (from <= 0) return 1;
  if (from > trials) return 0;
  if (!(p > 0)) return 0;
  if (!(p < 1)) return 1;
  // Sum the tail on the far side of the mean, whose terms shrink away from its start (a start term
  // that underflows means that tail is negligible): above the mean from k up, else below it from k − 1
  // down, and take the complement.
  const pmf = (j: number) => Math.exp(logChoose(trials, j) + j * Math.log(p) + (trials - j) * Math.log1p(-p));
  const odds = p / (1 - p);
  if (from > trials * p) {
    let sum = 0;
    for (let j = from, term = pmf(from); j <= trials && term > 0; j++) {
      sum += term;
      if (term < sum * 1e-16) break;
      term *= ((trials - j) / (j + 1)) * odds;
    }
    return Math.min(1, sum);
  }
  let below = 0;
  for (let j = from - 1, term = pmf(from - 1); j >= 0 && term > 0; j--) {
    below += term;
    if (term < below * 1e-16) break;
    term *= j / (trials - j + 1) / odds;
  }
  return Math.max(0, 1 - below);
}

function logChoose(n: number, k: number): number {
  return logGamma(n + 1) - logGamma(k + 1) - logGamma(n - k + 1);
}

/** ln Γ(x) for x > 0 (Lanczos, g = 7, nine terms: relative error below 1e-13). */
function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  const z = x - 1;
  let a = c[0]!;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += c[i]! / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Standard normal CDF (Abramowitz–Stegun 7.1.26 for erf; error below 1.5e-7). */
export function normalCdf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const poly =
    t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const erf = 1 - poly * Math.exp(-x * x);
  return z >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

function pct(v: number): string {
  return `${Math.round(v * 1000) / 10}%`;
}
