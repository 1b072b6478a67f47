import {
  ATTRIBUTION_HOP_KEYS,
  type AttributionHopKey,
  type HopLatency,
  type SignalGroup,
} from '@governor/conventions';

// Span-level hops (conventions' HOPS) use `scheduler` for what hop attribution (ATTRIBUTION_HOP_KEYS)
// calls `queue`; the labels and colours below map both to the same thing.

/** Hops that can happen before the first token (what TTFT is made of). */
export const TTFT_HOPS: readonly AttributionHopKey[] = [
  'gateway',
  'router',
  'cache',
  'queue',
  'prefill',
  'runtime',
  'other',
];

export const HOP_LABELS: Record<string, string> = {
  gateway: 'gateway',
  router: 'router',
  cache: 'cache',
  queue: 'queue',
  scheduler: 'queue',
  prefill: 'prefill',
  decode: 'decode',
  stream: 'stream',
  runtime: 'runtime',
  tool: 'tool',
  other: 'other',
};

export const HOP_COLORS: Record<string, string> = {
  gateway: '#64748b',
  router: '#56b4e9',
  cache: '#009e73',
  queue: '#d55e00',
  scheduler: '#d55e00',
  prefill: '#2563eb',
  decode: '#7c3aed',
  stream: '#e69f00',
  runtime: '#94a3b8',
  tool: '#cc79a7',
  other: '#cbd5e1',
};

export function hopLabel(hop: string): string {
  return HOP_LABELS[hop] ?? hop;
}

export function hopColor(hop: string | null): string {
  return (hop && HOP_COLORS[hop]) || '#94a3b8';
}

export type HopBasis = 'e2e' | 'ttft';

export interface HopSegment {
  hop: AttributionHopKey;
  ms: number;
  share: number | null;
}

function hopsOf(group: SignalGroup): Partial<Record<string, HopLatency>> {
  return (group.hops ?? {}) as Partial<Record<string, HopLatency>>;
}

/**
 * How long each hop took in a group: share × the group's p50 when the server reports shares (the
 * segments then add up to the p50), else each hop's own p50.
 */
export function computeHopSegments(group: SignalGroup, basis: HopBasis): HopSegment[] {
  const total = basis === 'e2e' ? group.e2eMs.p50 : group.ttftMs.p50;
  const hops = hopsOf(group);
  const segments: HopSegment[] = [];
  for (const hop of ATTRIBUTION_HOP_KEYS) {
    const latency = hops[hop];
    if (!latency) continue;
    const share = basis === 'e2e' ? latency.shareOfE2e : latency.shareOfTtft;
    if (share !== null && share !== undefined && total !== null) {
      if (share > 0) segments.push({ hop, ms: share * total, share });
    } else if (basis === 'e2e' && latency.p50 !== null && latency.p50 > 0) {
      segments.push({ hop, ms: latency.p50, share: null });
    }
  }
  const sum = segments.reduce((acc, s) => acc + s.ms, 0);
  return segments.map((s) => ({ ...s, share: s.share ?? (sum > 0 ? s.ms / sum : null) }));
}

/** The hop that took the largest share — what to act on first. */
export function findBottleneck(segments: HopSegment[]): HopSegment | null {
  return segments.reduce<HopSegment | null>((best, s) => (best === null || s.ms > best.ms ? s : best), null);
}

export function readHop(group: SignalGroup, hop: string): HopLatency | undefined {
  return hopsOf(group)[hop];
}
