import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseGovernorConfig } from '@governor/conventions';
import { runSimulation, createDefaultFleet } from '@governor/simulator';
import { startGovernor } from '../start-governor.ts';

const [workload = 'azure-conv', scenario = 'none', policy = 'governor', minutes = '20'] =
  process.argv.slice(2);
const fleet = createDefaultFleet();
const dir = mkdtempSync(join(tmpdir(), 'gov-bench-'));
const started = Date.now();
if (policy === 'governor') {
  const { buildBenchConfig } = await import('./control-bench.ts');
  const parsed = { config: buildBenchConfig(fleet, dir, { ttftMs: 2000, e2eMs: 60000 }) };
  const gov = await startGovernor({
    config: parsed.config,
    logger: process.env.GOV_LOG ? { level: 'error' } : false,
  });
  try {
    const summary = await runSimulation({
      workload: workload as never,
      scenario: scenario as never,
      durationMs: Number(minutes) * 60000,
      seed: 1,
      lockstep: gov.httpUrl,
      log: (l) => console.error(l),
    });
    const audit = await gov.control.listAudit({ limit: 5000 });
    if (process.env.DEBUG_SNAP) {
      const { createSignals } = await import('@governor/signals');
      const signals = createSignals(gov.store, parsed.config);
      const start = Date.parse(summary.simStart);
      for (const m of process.env.DEBUG_SNAP.split(',').map(Number)) {
        const atNs = BigInt(start + m * 60000) * 1000000n;
        for (const w of [30000, 300000]) {
          const snap = await signals.snapshot({ windowMs: w, by: ['pool'], atNs });
          for (const g of snap.groups)
            console.log(
              m,
              w / 1000,
              g.key.pool,
              JSON.stringify({
                n: g.requests,
                rep: g.replicas,
                ttft: g.ttftMs,
                q: g.queueMs,
                e2e: g.e2eMs.p50,
                hq: g.hops.queue,
                hp: g.hops.prefill,
                mem: g.memoryUtil,
                cu: g.computeUtil,
                err: g.errorRate,
                good: g.goodput,
                qd: g.queueDepth,
                cache: g.cacheHitRate,
                retry: g.retryRatio,
              }),
            );
        }
      }
    }
    const recs = await gov.control.listRecommendations({ limit: 1000 });
    const byId = new Map(recs.map((r) => [r.id, r]));
    for (const a of audit.reverse()) {
      if (a.decision === 'proposed') continue;
      const r = a.recommendationId ? byId.get(a.recommendationId) : undefined;
      console.log(
        a.at.slice(11, 19),
        a.decision,
        a.kind,
        JSON.stringify(a.target),
        JSON.stringify(r?.action),
        a.decision === 'auto_applied'
          ? `${r?.reason} ${JSON.stringify(r?.evidence.map((e) => [e.signal.split('{')[0], e.value]))}`
          : a.reason.slice(0, 300),
      );
    }
    if (process.env.PROPOSALS)
      for (const r of recs.filter((x) => x.state === 'proposed' || x.state === 'expired'))
        console.log(
          'P',
          r.createdAt.slice(11, 19),
          r.state,
          r.kind,
          JSON.stringify(r.target),
          JSON.stringify(r.action),
          r.confidence,
          r.gate,
          r.reason.slice(0, 200),
        );
    console.log(
      JSON.stringify({
        tasks: summary.tasks,
        ok: summary.successfulTasks,
        goodput: summary.goodput,
        cost: summary.costUsd,
        spd: summary.successPerDollar,
        ttftP95: summary.ttftMs.p95,
        actions: summary.actions,
        reversals: summary.reversals,
        pools: summary.pools.map((p) => [p.pool, p.replicasAvg, p.costUsd]),
      }),
    );
  } finally {
    await gov.close();
    rmSync(dir, { recursive: true, force: true });
  }
} else {
  const summary = await runSimulation({
    workload: workload as never,
    scenario: scenario as never,
    durationMs: Number(minutes) * 60000,
    seed: 1,
    policy: policy as never,
  });
  console.log(
    JSON.stringify({
      tasks: summary.tasks,
      ok: summary.successfulTasks,
      goodput: summary.goodput,
      cost: summary.costUsd,
      spd: summary.successPerDollar,
      ttftP95: summary.ttftMs.p95,
      actions: summary.actions,
      reversals: summary.reversals,
      pools: summary.pools.map((p) => [p.pool, p.replicasAvg, p.costUsd]),
    }),
  );
}
console.error(`wall ${(Date.now() - started) / 1000}s`);
