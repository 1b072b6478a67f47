// Seeded pseudo-random numbers. Every stochastic choice in a run draws from a named stream so that
// changing one part of the model (say, a scaling policy) does not reshuffle the workload's draws.

/** A seeded stream of uniform numbers in [0, 1) plus the few distributions the simulator needs. */
export interface Rng {
  next(): number;
  /** Integer in [0, n). */
  int(n: number): number;
  uniform(min: number, max: number): number;
  normal(): number;
  /** Log-normal with the given median and shape sigma. */
  logNormal(median: number, sigma: number): number;
  exponential(mean: number): number;
  chance(probability: number): boolean;
}

/** 32-bit avalanche hash (murmur3 finalizer) used to derive seeds and per-entity decisions. */
export function hashInt32(value: number): number {
  let h = value | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export function hashString(text: string, seed = 0): number {
  let h = (seed ^ 0x9e3779b9) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  }
  return hashInt32(h);
}

/** Combines integers into one well-mixed 32-bit value. */
export function hashCombine(...values: number[]): number {
  return hashChain(0x811c9dc5, values);
}

/**
 * One 32-bit hash chain started from `init`. Chains with different inits are independent
 * functions of the same inputs, which is what wider ids need (halves derived from one 32-bit
 * state would collide like 32-bit ids).
 */
export function hashChain(init: number, values: readonly number[]): number {
  let h = init >>> 0;
  for (const v of values) {
    h = hashInt32(Math.imul(h ^ hashInt32(v | 0), 0x9e3779b1) ^ Math.floor(v / 4294967296) ^ (h >>> 15));
  }
  return h;
}

/** Uniform number in [0, 1) that depends only on its inputs (for decisions that must not consume a stream). */
export function hashUniform(...values: number[]): number {
  return hashCombine(...values) / 4294967296;
}

/** sfc32: small, fast, and passes PractRand; seeded from (seed, stream name). */
export function createRng(seed: number, stream: string): Rng {
  let a = hashCombine(seed, hashString(stream), 1);
  let b = hashCombine(seed, hashString(stream), 2);
  let c = hashCombine(seed, hashString(stream), 3);
  let d = 1;
  const nextUint = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
  for (let i = 0; i < 12; i++) nextUint();
  let spareNormal: number | null = null;
  const next = (): number => nextUint() / 4294967296;
  const normal = (): number => {
    if (spareNormal !== null) {
      const value = spareNormal;
      spareNormal = null;
      return value;
    }
    let u = 0;
    while (u === 0) u = next();
    const v = next();
    const radius = Math.sqrt(-2 * Math.log(u));
    spareNormal = radius * Math.sin(2 * Math.PI * v);
    return radius * Math.cos(2 * Math.PI * v);
  };
  return {
    next,
    int: (n) => Math.floor(next() * n),
    uniform: (min, max) => min + (max - min) * next(),
    normal,
    logNormal: (median, sigma) => median * Math.exp(sigma * normal()),
    exponential: (mean) => -mean * Math.log(1 - next()),
    chance: (probability) => next() < probability,
  };
}
