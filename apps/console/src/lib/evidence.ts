import { isSignalPath } from '@governor/conventions';

// Evidence names a signal, sometimes with a selector: `ttftMs.p95`, `errorRate{pool=pool-a}`,
// `errorRate{peers of pool-a}`. Only fields of GET /api/signals/series can be charted.

export interface ParsedEvidenceSignal {
  signal: string;
  labels: Record<string, string>;
  chartable: boolean;
}

export function parseEvidenceSignal(text: string): ParsedEvidenceSignal {
  const match = /^([^{]+)(?:\{([^}]*)\})?$/.exec(text.trim());
  const signal = match?.[1]?.trim() ?? text;
  const labels: Record<string, string> = {};
  let selectorUnderstood = true;
  for (const part of (match?.[2] ?? '').split(',').filter((p) => p.trim() !== '')) {
    const eq = /^\s*([a-z_]+)\s*=\s*"?([^"]*)"?\s*$/.exec(part);
    if (eq) labels[eq[1]!] = eq[2]!;
    else selectorUnderstood = false;
  }
  return { signal, labels, chartable: isSignalPath(signal) && selectorUnderstood };
}

/** Unit for formatting a signal's values. */
export function unitForSignal(signal: string): string | undefined {
  if (/Ms(\.|$)|\.p(50|95|99)$/.test(signal)) return 'ms';
  if (/Usd$/.test(signal) || signal === 'costUsd') return '$';
  if (/Rate$|^goodput$|Ratio$|Util$|share/.test(signal) && signal !== 'utilizationRatio') return '%';
  return undefined;
}
