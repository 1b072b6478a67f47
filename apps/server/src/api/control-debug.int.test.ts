import { expect, test } from 'vitest';
import { TEST_POOLS, runTicks, startTestGovernor } from './fixtures/control-test-governor.ts';
import type { PoolTraffic } from './fixtures/fleet-telemetry.ts';
import { T0_MS } from './fixtures/fleet-telemetry.ts';
import { parseGovernorConfig } from '@governor/conventions';

test('debug', async () => {
  const peak = { peak_tokens_per_s_per_replica: 20_000 };
  const pools = TEST_POOLS.map((p) => ({ ...p, ...peak }));
  const g = await startTestGovernor({ pools });
  const h100: PoolTraffic = { pool: 'h100-east', model: 'llama-8b', replicas: 2, ratePerS: 2 };
  const a100: PoolTraffic = { pool: 'a100-west', model: 'llama-8b', gpuType: 'A100', region: 'us-west', replicas: 2, ratePerS: 2 };
  const slowPrefill = { prefillMsPerToken: 1.4 };
  await runTicks(g, [{ ...h100, ...slowPrefill }, { ...a100, ...slowPrefill }], 0, 180_000);
  const [tick] = await runTicks(g, [{ ...h100, ...slowPrefill, cacheHitShare: 0 }, { ...a100, ...slowPrefill, cacheHitShare: 0.9 }], 180_000, 210_000);
  console.log(JSON.stringify(tick!.recommendations.map((r) => [r.kind, r.target, r.action, r.state, r.reason])));
  const { createSignals } = await import('@governor/signals');
  const s = createSignals(g.gov.store, parseGovernorConfig({ pools, pricing: { gpu_hour_usd: { H100: 4, A100: 2.5 } } }).config as never);
  const snap = await s.snapshot({ windowMs: 30000, by: ['pool'], atNs: BigInt(T0_MS + 210_000) * 1000000n });
  console.log(JSON.stringify(snap.groups.map((x) => [x.key, x.requests, x.computeUtil, x.memoryUtil, x.utilizationRatio, x.ttftMs.p95, x.hops.queue, x.cacheHitRate, x.hops.prefill])));
  await g.close();
  expect(1).toBe(1);
});
