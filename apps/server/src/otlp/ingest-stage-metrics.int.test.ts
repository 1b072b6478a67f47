import { encodeTraceRequestProtobuf } from '@governor/otlp';
import { syntheticTraceRequest } from '@governor/otlp/fixtures';
import { REFRESH_STEPS } from '@governor/signals';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { INGEST_STAGES } from './ingest-stage-metrics.ts';
import { type TestGovernor, startTestGovernor } from './start-test-governor.ts';

// The ingest CPU budget on /metrics: every stage a batch goes through is charged, and the stages
// add up to no more than the threads they ran on (nothing counted twice).

let t: TestGovernor;
beforeAll(async () => {
  t = await startTestGovernor();
});
afterAll(async () => {
  await t?.close();
});

async function readCounters(): Promise<{
  stages: Record<string, number>;
  threads: Record<string, number>;
  refreshSteps: Record<string, number>;
}> {
  const text = await (await fetch(`${t.url}/metrics`)).text();
  const read = (family: string, label: string) =>
    Object.fromEntries(
      [...text.matchAll(new RegExp(`^${family}\\{${label}="([^"]+)"\\} (\\S+)$`, 'gm'))].map((m) => [
        m[1]!,
        Number(m[2]),
      ]),
    );
  return {
    stages: read('governor_ingest_stage_cpu_seconds_total', 'stage'),
    threads: read('governor_ingest_thread_cpu_seconds_total', 'threads'),
    refreshSteps: read('governor_rollup_refresh_step_seconds_total', 'step'),
  };
}

const post = (spans: number, seed: number) =>
  fetch(`${t.url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-protobuf' },
    body: encodeTraceRequestProtobuf(
      syntheticTraceRequest({ spans, seed, startNs: BigInt(Date.now()) * 1_000_000n }),
    ),
  });

it('charges the CPU of every ingest stage, once', async () => {
  const before = await readCounters();
  expect(Object.keys(before.stages).sort()).toEqual([...INGEST_STAGES].sort());
  // Large bodies go to the decode workers, a small one is decoded inline.
  const replies = await Promise.all([post(2_000, 1), post(2_000, 2), post(20, 3)]);
  expect(replies.map((r) => r.status)).toEqual([200, 200, 200]);
  await t.governor.engine.embedded!.writer.checkpoint();
  // The rollup refresh runs on its own timer (every 2 s), and a refresh that began before the
  // spans were committed finds nothing to compute: wait for one that computed them.
  const stages = ['http', 'decode', 'normalize', 'append', 'commit', 'checkpoint', 'rollup_refresh'];
  const steps = ['plan', 'trace_facts', 'write', 'commit'];
  let after = await readCounters();
  const grew = (stage: string) => (after.stages[stage] ?? 0) - (before.stages[stage] ?? 0);
  const stepGrew = (step: string) => (after.refreshSteps[step] ?? 0) - (before.refreshSteps[step] ?? 0);
  const deadline = Date.now() + 20_000;
  while ((stages.some((s) => grew(s) <= 0) || steps.some((s) => stepGrew(s) <= 0)) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    after = await readCounters();
  }
  for (const stage of stages) expect(grew(stage), stage).toBeGreaterThan(0);
  const stagesTotal = Object.values(after.stages).reduce((a, b) => a + b, 0);
  const threadsTotal = Object.values(after.threads).reduce((a, b) => a + b, 0);
  // Clock reads are not simultaneous: allow a few milliseconds.
  expect(stagesTotal).toBeLessThanOrEqual(threadsTotal + 0.01);
  // Where the refresh's time went, by step: the spans' traces were computed and written.
  expect(Object.keys(after.refreshSteps).sort()).toEqual([...REFRESH_STEPS].sort());
  for (const step of steps) expect(stepGrew(step), step).toBeGreaterThan(0);
});
