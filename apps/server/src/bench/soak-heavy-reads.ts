import { quantileContOfSorted } from '@governor/conventions';

// The soak's heavy-read client (`bench soak --heavy-reads`): one client reading the widest signals
// back to back, as an operator's dashboards and ad-hoc digging would while the fleet sends.

/** What the heavy-read client asks for, in turn: every dimension at once over an hour, and a series. */
const HEAVY_READS = [
  '/api/signals?by=tenant,pool,model,priority,workflow_type&window=1h',
  '/api/signals/series?signal=ttftMs.p95&by=tenant,pool&step=1m',
];

/** The heavy-read client: reads HEAVY_READS in turn, back to back, while `going()`. */
export function createHeavyReads(url: string, token: string) {
  let ms: number[] = [];
  let failed = 0;
  let failures = new Map<string, number>();
  return {
    loop: async (going: () => boolean) => {
      for (let k = 0; going(); k++) {
        const sentAt = performance.now();
        const response = await fetch(`${url}${HEAVY_READS[k % HEAVY_READS.length]}`, {
          headers: { authorization: `Bearer ${token}` },
        }).catch(() => null);
        const answer = await response?.text().catch(() => '');
        if (response?.status === 200) ms.push(performance.now() - sentAt);
        else {
          failed++;
          const code = /"code":"(GOV_ERR_\w+)"/.exec(answer ?? '')?.[1];
          const reason = `${response ? `HTTP ${response.status}` : 'no answer'}${code ? ` ${code}` : ''} after ${Math.round((performance.now() - sentAt) / 1000)} s`;
          failures.set(reason, (failures.get(reason) ?? 0) + 1);
        }
      }
    },
    reset() {
      ms = [];
      failed = 0;
      failures = new Map();
    },
    summary() {
      const sorted = [...ms].sort((a, b) => a - b);
      return {
        count: ms.length,
        failed,
        failureReasons: Object.fromEntries(failures),
        p50Ms: quantileOf(sorted, 0.5),
        maxMs: quantileOf(sorted, 1),
      };
    },
  };
}

function quantileOf(sorted: number[], q: number): number | null {
  return sorted.length === 0 ? null : Math.round(quantileContOfSorted(sorted, q) * 10) / 10;
}
