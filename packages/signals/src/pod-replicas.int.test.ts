import { createFleetIdentity } from '@governor/otlp';
import type { DecodedMetricsRequest } from '@governor/otlp';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempStore, ingest, testConfig } from '../test/store-harness.ts';
import { createSignals } from './create-signals.ts';
import { atMs } from './fixtures/trace-fixtures.ts';

// Replicas and cost from the pods as a Kubernetes fleet shows them through the Collector's
// prometheus receiver: one `up` series per pod target, scraped every 15 s at the pod's own phase;
// 0 while the pod starts (its server does not answer yet), 1 while it serves or drains. Every pod
// that holds its GPUs costs money, ready or not.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const SCRAPE_MS = 15_000;

/** One pod's scrape target over [fromMs, toMs): `up` at each scrape, 0 before readyMs. */
function podTarget(pod: string, phaseMs: number, fromMs: number, toMs: number, readyMs = fromMs) {
  const times: number[] = [];
  for (let t = fromMs + phaseMs; t < toMs; t += SCRAPE_MS) times.push(t);
  return {
    resource: {
      'service.name': 'vllm',
      'service.instance.id': `10.0.0.${pod.length}:8000`,
      'k8s.pod.name': pod,
      'k8s.replicaset.name': 'vllm-llama8b-7d9f6c5b4',
    },
    scopeMetrics: [
      {
        scope: { name: 'otelcol/prometheusreceiver', version: '' },
        metrics: [
          {
            name: 'up',
            description: '',
            unit: '',
            type: 'gauge' as const,
            isMonotonic: false,
            temporality: 0,
            points: times.map((t) => ({
              attributes: {},
              startNs: 0n,
              timeNs: atMs(t),
              value: t < readyMs ? 0 : 1,
              count: null,
              sum: null,
              min: null,
              max: null,
              bucketCounts: null,
              explicitBounds: null,
              quantiles: null,
            })),
          },
        ],
      },
    ],
  };
}

describe('replicas and cost from per-pod scrape targets', () => {
  it('counts starting, ready and draining pods as paid, each from its own staggered series', async () => {
    const { store, close } = await createTempStore();
    cleanups.push(close);
    const metrics: DecodedMetricsRequest = {
      resourceMetrics: [
        // Serves the whole window.
        podTarget('vllm-llama8b-7d9f6c5b4-aaaaa', 2_000, 0, 300_000),
        // Scheduled at 120 s, loads weights for a minute (up 0), serves from 180 s.
        podTarget('vllm-llama8b-7d9f6c5b4-bbbbb', 7_000, 120_000, 300_000, 180_000),
        // Scaled in: drains and goes away at 200 s.
        podTarget('vllm-llama8b-7d9f6c5b4-ccccc', 11_000, 0, 200_000),
      ],
    };
    await ingest(store, [], [metrics], createFleetIdentity({ pools: [{ name: 'vllm-llama8b' }] }));
    const config = testConfig({
      pricing: { gpu_hour_usd: { H100: 3.6 } },
      pools: [{ name: 'vllm-llama8b', gpu_type: 'H100' }],
    });
    const snapshot = await createSignals(store, config).snapshot({
      windowMs: 300_000,
      by: ['pool'],
      atNs: atMs(300_000),
    });
    const pool = snapshot.groups.find((g) => g.key.pool === 'vllm-llama8b')!;
    // Each pod costs from when it was scheduled to when it left, to within one scrape interval at
    // each end: 300 s + 180 s + 200 s of pod time at $3.6 per GPU-hour.
    const usdPerS = 3.6 / 3600;
    expect(pool.costUsd!).toBeGreaterThanOrEqual((300 + 180 + 200 - 3 * 15) * usdPerS);
    expect(pool.costUsd!).toBeLessThanOrEqual((300 + 180 + 200 + 3 * 15) * usdPerS);
    // Time-weighted replicas: about 680 / 300 = 2.27 — not 1 (the pods at the newest instant), not 3.
    expect(pool.replicas!).toBeGreaterThan(2.1);
    expect(pool.replicas!).toBeLessThan(2.45);
  });
});
