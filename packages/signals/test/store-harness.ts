import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type GovernorConfig, parseGovernorConfig } from '@governor/conventions';
import {
  type DecodedMetricsRequest,
  type DecodedTraceRequest,
  type FleetIdentity,
  createHopClassifier,
  normalizeMetricsRequest,
  type SpanRow,
  normalizeTraceRequest,
} from '@governor/otlp';
import { syntheticTraceRequest } from '@governor/otlp/fixtures';
import { type Store, createStore } from '@governor/store';

/** A store in a fresh temp directory; close() removes it. */
export async function createTempStore(): Promise<{ store: Store; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'governor-signals-'));
  const store = await createStore({ dataDir: dir, threads: 2, memoryLimit: '1GB' });
  return {
    store,
    async close() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const classifier = createHopClassifier();

/** Writes exports through the same normalization and writer as OTLP ingest. */
export async function ingest(
  store: Store,
  traces: readonly DecodedTraceRequest[],
  metrics: readonly DecodedMetricsRequest[] = [],
  identity?: FleetIdentity,
): Promise<void> {
  const spans = traces.flatMap(
    (t) => normalizeTraceRequest(t, { classifier, aliases: {}, ...(identity ? { identity } : {}) }).rows,
  );
  const points = metrics.flatMap((m) => normalizeMetricsRequest(m, {}, identity).rows);
  await store.writer.write(spans, points);
}

export function testConfig(raw: Record<string, unknown> = {}): GovernorConfig {
  const parsed = parseGovernorConfig(raw);
  if (!parsed.ok) throw new Error(`bad test config: ${JSON.stringify(parsed.issues)}`);
  return parsed.config;
}

/**
 * Batch number `seed` of synthetic spans as the writer takes them: `spans` spans starting at
 * startNs + seed × spacingNs, with trace ids unique to the seed.
 */
export function syntheticSpanBatch(
  seed: number,
  options: { spans: number; startNs: bigint; spacingNs: bigint },
): SpanRow[] {
  return normalizeTraceRequest(
    syntheticTraceRequest({
      spans: options.spans,
      seed,
      startNs: options.startNs + BigInt(seed) * options.spacingNs,
      idPrefix: seed.toString(16).padStart(8, '0'),
    }),
    { classifier, aliases: {} },
  ).rows;
}
