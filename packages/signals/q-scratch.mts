import { createStore } from '@governor/store';
import { parseGovernorConfig } from '@governor/conventions';
import { buildWindowParams } from '/work/main/packages/signals/src/snapshot/window-params.ts';
import { WINDOW_SQL } from '/work/main/packages/signals/src/snapshot/window-rows.ts';
import { pickSqlParams } from '/work/main/packages/signals/src/sql-params.ts';
const store = await createStore({ dataDir: process.argv[2]!, threads: 2 });
const cfg = parseGovernorConfig({ pricing: { gpu_hour_usd: { H100: 4 } } });
if (!cfg.ok) throw new Error('cfg');
const [st] = await store.query<any>('SELECT newest_span_end_ns FROM request_facts_state');
const to = BigInt(st.newest_span_end_ns) - 10_000_000_000n;
const params = buildWindowParams({ fromNs: to - 300_000_000_000n, toNs: to, stepNs: 300_000_000_000n, by: ['pool'], filter: {}, pendingAfterNs: to }, cfg.config);
for (const [name, sql] of Object.entries(WINDOW_SQL)) {
  if (name === 'learnedPeak') continue;
  for (let i = 0; i < 3; i++) {
    const s = performance.now(); const c = process.cpuUsage();
    const rows = await store.query(sql, pickSqlParams(sql, params));
    const u = process.cpuUsage(c);
    console.log(name, rows.length, (performance.now() - s).toFixed(1), 'ms wall', ((u.user+u.system)/1000).toFixed(0), 'ms cpu');
  }
}
if (process.argv[3]) {
  const sql = (WINDOW_SQL as any)[process.argv[3]];
  const rows = await store.query<any>('EXPLAIN ANALYZE ' + sql, pickSqlParams(sql, params));
  console.log(rows[0].explain_value);
}
await store.close();
