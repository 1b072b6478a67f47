import { createStore } from '@governor/store';
const store = await createStore({ dataDir: process.argv[2]!, threads: 2 });
const [st] = await store.query<any>('SELECT newest_span_end_ns FROM request_facts_state');
const to = BigInt(st.newest_span_end_ns) - 10_000_000_000n;
const from = to - 300_000_000_000n;
const base = `FROM request_facts WHERE end_ns > ${from} AND end_ns <= ${to} GROUP BY pool`;
const variants: Record<string, string> = {
  avg20filter: `SELECT pool, ${Array.from({length: 20}, (_, i) => `avg(coalesce(hop_gateway_ms,0)/e2e_ms) FILTER (WHERE e2e_ms > ${i})`).join(',')} ${base}`,
  avg20nullif: `SELECT pool, ${Array.from({length: 20}, (_, i) => `avg(coalesce(hop_gateway_ms,0)/nullif(e2e_ms - ${i}, 0))`).join(',')} ${base}`,
  avg20col: `SELECT pool, ${Array.from({length: 20}, (_, i) => `avg(hop_gateway_ms + ${i})`).join(',')} ${base}`,
  sum20: `SELECT pool, ${Array.from({length: 20}, (_, i) => `sum(hop_gateway_ms + ${i})`).join(',')} ${base}`,
  cnt20filter: `SELECT pool, ${Array.from({length: 20}, (_, i) => `count(*) FILTER (WHERE e2e_ms > ${i})`).join(',')} ${base}`,
  cnt20sum: `SELECT pool, ${Array.from({length: 20}, (_, i) => `sum((e2e_ms > ${i})::INT)`).join(',')} ${base}`,
};
for (const [name, sql] of Object.entries(variants)) {
  const times: string[] = [];
  for (let i = 0; i < 4; i++) {
    const c = process.cpuUsage(); const s = performance.now();
    await store.query(sql);
    const u = process.cpuUsage(c);
    times.push(`${(performance.now() - s).toFixed(0)}/${((u.user + u.system) / 1000).toFixed(0)}`);
  }
  console.log(name.padEnd(8), 'wall/cpu ms', times.join('  '));
}
await store.close();
