import { createHash } from 'node:crypto';

export type Labels = Record<string, string>;

/** Labels sorted by name, so equal sets serialize and hash the same. */
export function sortLabels(labels: Labels): Labels {
  return Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * Stable identity of an alert: 16 hex digits of SHA-256 over the sorted label pairs that identify it
 * (alertname plus the group labels). Deduplicates across evaluations and restarts.
 */
export function fingerprintLabels(labels: Labels): string {
  const hash = createHash('sha256');
  for (const [name, value] of Object.entries(sortLabels(labels))) {
    hash.update(name).update('\u0000').update(value).update('\u0001');
  }
  return hash.digest('hex').slice(0, 16);
}

/** Prometheus-style `{a="1",b="2"}` text, used in group keys and messages. */
export function formatLabels(labels: Labels): string {
  const pairs = Object.entries(sortLabels(labels)).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  return `{${pairs.join(',')}}`;
}

export function pickLabels(labels: Labels, names: readonly string[]): Labels {
  const out: Labels = {};
  for (const name of names) {
    const value = labels[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/** Labels that every one of the sets has with the same value. */
export function commonLabels(sets: readonly Labels[]): Labels {
  const [first, ...rest] = sets;
  if (!first) return {};
  const out: Labels = {};
  for (const [name, value] of Object.entries(first)) {
    if (rest.every((s) => s[name] === value)) out[name] = value;
  }
  return sortLabels(out);
}
