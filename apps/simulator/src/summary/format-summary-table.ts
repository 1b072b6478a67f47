import type { Percentiles } from './percentiles.ts';
import type { RunSummary } from './run-summary.ts';

const fmtInt = (v: number) => v.toLocaleString('en-US');
const fmtNum = (v: number | null, digits = 2) => (v === null ? '—' : v.toFixed(digits));
const fmtPct = (v: number | null) => (v === null ? '—' : `${(v * 100).toFixed(1)}%`);
const fmtP = (p: Percentiles) => `${fmtNum(p.p50, 0)} / ${fmtNum(p.p95, 0)} / ${fmtNum(p.p99, 0)}`;

function renderTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** The run summary as plain-text tables for stdout. */
export function formatSummaryTable(s: RunSummary): string {
  const overview: Array<[string, string]> = [
    ['workload / scenario / policy', `${s.workload} / ${s.scenario} / ${s.policy} (seed ${s.seed})`],
    ['simulated', `${s.simStart} → ${s.simEnd} (${fmtNum(s.simDurationS / 60, 1)} min)`],
    [
      'tasks (successful, within SLO, incomplete)',
      `${fmtInt(s.tasks)} (${fmtInt(s.successfulTasks)}, ${fmtInt(s.tasksWithinSlo)}, ${fmtInt(s.incompleteTasks)})`,
    ],
    ['goodput (SLO TTFT ≤ ' + s.slo.ttftMs + ' ms, e2e ≤ ' + s.slo.e2eMs + ' ms)', fmtPct(s.goodput)],
    ['GPU-hours / cost', `${fmtNum(s.gpuHours, 2)} / $${fmtNum(s.costUsd, 2)}`],
    [
      'success per $ / $ per successful task',
      `${fmtNum(s.successPerDollar, 2)} / $${fmtNum(s.costPerSuccessfulTaskUsd, 4)}`,
    ],
    ['TTFT ms p50 / p95 / p99', fmtP(s.ttftMs)],
    ['e2e ms p50 / p95 / p99', fmtP(s.e2eMs)],
    [
      'requests (errors, timeouts, preempted, rejected, cancelled)',
      `${fmtInt(s.requests)} (${fmtInt(s.errors)}, ${fmtInt(s.timeouts)}, ${fmtInt(s.preempted)}, ${fmtInt(s.rejected)}, ${fmtInt(s.cancelled)})`,
    ],
    ['retries', fmtInt(s.retries)],
    ['actions / reversals', `${fmtInt(s.actions)} / ${fmtInt(s.reversals)}`],
  ];
  if (s.telemetry) {
    const t = s.telemetry;
    overview.push([
      'spans emitted / exported / failed',
      `${fmtInt(t.spansEmitted)} / ${fmtInt(t.spansExported)} / ${fmtInt(t.spansFailed)} → ${t.target} (${t.protocol})`,
    ]);
    overview.push([
      'metric points emitted / exported',
      `${fmtInt(t.metricPointsEmitted)} / ${fmtInt(t.metricPointsExported)}`,
    ]);
    if (t.lastExportError) overview.push(['last export error', t.lastExportError]);
  }
  if (s.lockstep) {
    const l = s.lockstep;
    overview.push([
      'lockstep calls / failures / actions applied',
      `${l.calls} / ${l.failures} / ${l.actionsApplied} (${l.url})`,
    ]);
    if (l.lastError) overview.push(['last lockstep error', l.lastError]);
  }
  const labelWidth = Math.max(...overview.map(([k]) => k.length));
  const parts = [overview.map(([k, v]) => `${k.padEnd(labelWidth)}  ${v}`).join('\n')];
  parts.push(
    renderTable(
      [
        'pool',
        'model',
        'gpu',
        'region',
        'requests',
        'errors',
        'replicas avg/max',
        'GPU-h',
        'cost $',
        'TTFT p95 ms',
        'queue p95 ms',
        'cache hit',
      ],
      s.pools.map((p) => [
        p.pool,
        p.model,
        `${p.gpusPerReplica}×${p.gpuType}`,
        p.region,
        fmtInt(p.requests),
        fmtInt(p.errors),
        `${fmtNum(p.replicasAvg, 2)}/${p.replicasMax}`,
        fmtNum(p.gpuHours, 2),
        fmtNum(p.costUsd, 2),
        fmtNum(p.ttftMs.p95, 0),
        fmtNum(p.queueMs.p95, 0),
        fmtPct(p.cacheHitRate),
      ]),
    ),
  );
  if (s.faults.length > 0) {
    parts.push(
      renderTable(
        ['fault', 'target', 'start', 'end'],
        s.faults.map((f) => [
          f.kind,
          Object.entries(f.target)
            .map(([k, v]) => `${k}=${v}`)
            .join(','),
          f.start,
          f.end,
        ]),
      ),
    );
  }
  return parts.join('\n\n');
}
