import type { RecommendationTarget } from '@governor/conventions';

const TARGET_DIMENSIONS = ['pool', 'model', 'region', 'tenant'] as const;

/** Canonical key of a target, e.g. `model=llama-8b,pool=h100-east`; cooldowns and hysteresis key on it. */
export function formatTargetKey(target: RecommendationTarget): string {
  return TARGET_DIMENSIONS.filter((d) => target[d] !== undefined)
    .map((d) => `${d}=${target[d]}`)
    .join(',');
}

/** The target a key of formatTargetKey names. */
export function parseTargetKey(key: string): RecommendationTarget {
  const target: RecommendationTarget = {};
  for (const term of key.split(',')) {
    const eq = term.indexOf('=');
    const dim = term.slice(0, eq) as (typeof TARGET_DIMENSIONS)[number];
    if (eq > 0 && TARGET_DIMENSIONS.includes(dim)) target[dim] = term.slice(eq + 1);
  }
  return target;
}

/**
 * A policy's `match.target`: comma-separated terms, all of which must hold. A term is `dim=glob`
 * (`pool=llama8b-*`) or a bare glob matched against any of the target's values. `*` matches any
 * run of characters, `?` one character. No pattern matches every target.
 */
export function matchesTargetPattern(target: RecommendationTarget, pattern: string | undefined): boolean {
  if (pattern === undefined || pattern.trim() === '' || pattern.trim() === '*') return true;
  return pattern
    .split(',')
    .map((term) => term.trim())
    .filter((term) => term.length > 0)
    .every((term) => {
      const eq = term.indexOf('=');
      if (eq === -1)
        return TARGET_DIMENSIONS.some((d) => target[d] !== undefined && globMatches(term, target[d]!));
      const dim = term.slice(0, eq).trim() as (typeof TARGET_DIMENSIONS)[number];
      const value = target[dim];
      return value !== undefined && globMatches(term.slice(eq + 1).trim(), value);
    });
}

function globMatches(glob: string, value: string): boolean {
  const source = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replaceAll('*', '.*')
    .replaceAll('?', '.');
  return new RegExp(`^${source}$`).test(value);
}
