import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GovernorConfig } from '@governor/conventions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningGovernor, startGovernor } from '../start-governor.ts';

// One high-cardinality read must not stall the control plane: GET /api/signals?by=tenant over
// 50,000 tenants comes back capped (top groups by requests plus `other`), and OTLP acks and
// /api/health keep their latency while such reads run back to back.

const TENANTS = 50_000;
let dir: string;
let governor: RunningGovernor;
let base: string;

function kv(key: string, value: string) {
  return { key, value: { stringValue: value } };
}

/** One root span (one request) per entry, OTLP/JSON as the JS exporter writes it. */
function traceBody(requests: { tenant: string; endNs: bigint; id: number }[]): string {
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [kv('service.name', 'gateway')] },
        scopeSpans: [
          {
            scope: { name: 'heavy-read' },
            spans: requests.map((r) => ({
              traceId: r.id.toString(16).padStart(32, '0'),
              spanId: r.id.toString(16).padStart(16, '0'),
              name: 'chat',
              kind: 2,
              startTimeUnixNano: (r.endNs - 400_000_000n).toString(),
              endTimeUnixNano: r.endNs.toString(),
              attributes: [
                kv('governor.pool', 'pool-a'),
                kv('gen_ai.request.model', 'm'),
                kv('governor.tenant', r.tenant),
              ],
              status: { code: 1 },
            })),
          },
        ],
      },
    ],
  });
}

/** Ms until the 200; a failed or refused request counts as never acknowledged. */
async function post(body: string): Promise<number> {
  const started = performance.now();
  try {
    const res = await fetch(`${base}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    await res.arrayBuffer();
    return res.status === 200 ? performance.now() - started : Number.POSITIVE_INFINITY;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** Ms until the answer; a failed request counts as never answered. */
async function timeGet(url: string): Promise<{ ms: number; body: unknown }> {
  const started = performance.now();
  try {
    const res = await fetch(url);
    const body = await res.json();
    return { ms: performance.now() - started, body };
  } catch {
    return { ms: Number.POSITIVE_INFINITY, body: null };
  }
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};

let nextId = 1;
const nowNs = () => BigInt(Date.now()) * 1_000_000n;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'governor-heavy-read-'));
  governor = await startGovernor({
    config: GovernorConfig.parse({
      server: { host: '127.0.0.1', http_port: 0, grpc_port: 0, data_dir: dir },
    }),
    env: {},
  });
  base = governor.httpUrl;
  // 50,000 tenants, one request each, plus tenant-0 with more so the ranking has a clear top.
  const endBase = nowNs() - 120_000_000_000n;
  for (let from = 0; from < TENANTS; from += 5_000) {
    const batch = Array.from({ length: 5_000 }, (_, i) => ({
      tenant: `tenant-${from + i}`,
      endNs: endBase + BigInt(from + i) * 1_000_000n,
      id: nextId++,
    }));
    expect(await post(traceBody(batch))).toBeLessThan(Number.POSITIVE_INFINITY);
  }
  // The rollup's one-off catch-up over the bulk load is not what this test measures.
  await governor.signals.refresh();
}, 180_000);
afterAll(async () => {
  await governor?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Snapshot {
  groups: { key: Record<string, unknown>; requests: number; other?: boolean }[];
  truncated: boolean;
  maxGroups: number;
  otherGroups: number;
}

describe('a heavy read', () => {
  it('keeps OTLP acks and /api/health fast while GET /api/signals?by=tenant runs over 50,000 tenants', async () => {
    let reading = true;
    const readMs: number[] = [];
    const reads = (async () => {
      while (reading) readMs.push((await timeGet(`${base}/api/signals?by=tenant&window=1h`)).ms);
    })();
    const ackMs: number[] = [];
    const healthMs: number[] = [];
    const health = (async () => {
      while (reading) {
        healthMs.push((await timeGet(`${base}/api/health`)).ms);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    // Batches of 200 requests from tenants 0–199, so those tenants lead the ranking.
    const until = performance.now() + 20_000;
    while (performance.now() < until || readMs.length < 2) {
      const batch = Array.from({ length: 200 }, (_, i) => ({
        tenant: `tenant-${i}`,
        endNs: nowNs() - 60_000_000_000n,
        id: nextId++,
      }));
      ackMs.push(await post(traceBody(batch)));
      await new Promise((r) => setTimeout(r, 50));
    }
    reading = false;
    await Promise.all([reads, health]);
    const f = (v: number) => v.toFixed(0);
    console.log(
      `heavy read: ${readMs.length} reads of 50,000 tenants (p50 ${f(quantile(readMs, 0.5))} ms, max ${f(Math.max(...readMs))} ms); ` +
        `${ackMs.length} OTLP acks p50 ${f(quantile(ackMs, 0.5))} ms, p99 ${f(quantile(ackMs, 0.99))} ms, max ${f(Math.max(...ackMs))} ms; ` +
        `/api/health p50 ${f(quantile(healthMs, 0.5))} ms, max ${f(Math.max(...healthMs))} ms`,
    );
    // Before the cap a read took 10–90 s and blocked the event loop: acks were reset and /api/health
    // went unanswered for seconds.
    expect(readMs.every(Number.isFinite)).toBe(true);
    expect(ackMs.every(Number.isFinite)).toBe(true);
    expect(quantile(ackMs, 0.99)).toBeLessThan(2_000);
    expect(Math.max(...healthMs)).toBeLessThan(2_000);

    // Every acknowledged request is counted once: in its tenant's group or in `other` (a window
    // ending now, not at the watermark, which trails the newest event by the lateness).
    const at = new Date().toISOString();
    const { body } = await timeGet(`${base}/api/signals?by=tenant&window=1h&at=${at}`);
    const snapshot = body as Snapshot;
    expect(snapshot.truncated).toBe(true);
    expect(snapshot.maxGroups).toBe(1_000);
    expect(snapshot.otherGroups).toBe(TENANTS - 1_000);
    expect(snapshot.groups).toHaveLength(1_001);
    const other = snapshot.groups.at(-1)!;
    expect(other).toMatchObject({ key: {}, other: true });
    expect(snapshot.groups.reduce((n, g) => n + g.requests, 0)).toBe(TENANTS + 200 * ackMs.length);
    const kept = new Set(snapshot.groups.map((g) => g.key.tenant));
    for (let i = 0; i < 200; i++) expect(kept.has(`tenant-${i}`)).toBe(true);
  }, 240_000);
});
