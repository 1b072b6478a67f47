import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { type TestGovernor, startTestGovernor } from './otlp/start-test-governor.ts';

// SIGTERM while a read runs: the read must not hold the exit. Before, Fastify waited for every
// request in flight, and a heavy read (up to its 30 s deadline, or a long ad-hoc query) kept the
// process past the 30 s shutdown limit, which then exited 1.

let t: TestGovernor | null = null;

afterEach(async () => {
  if (t) rmSync(t.dataDir, { recursive: true, force: true });
  t = null;
});

describe('shutting down while a read runs', () => {
  it('cancels the read with 503 GOV_ERR_SHUTTING_DOWN and exits within seconds', async () => {
    t = await startTestGovernor({ server: { sql_timeout_ms: 120_000 } });
    // An ad-hoc query that would run for minutes.
    const answer = fetch(`${t.url}/api/sql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sql: 'SELECT count(*) FROM range(0, 100000000000) a WHERE a.range % 7 = 3' }),
    }).then(async (r) => ({
      status: r.status,
      retryAfter: r.headers.get('retry-after'),
      body: await r.json(),
    }));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const started = performance.now();
    await t.close();
    const closeMs = performance.now() - started;
    const reply = await answer;
    expect(reply.status).toBe(503);
    expect(reply.body).toMatchObject({ error: { code: 'GOV_ERR_SHUTTING_DOWN' } });
    expect(Number(reply.retryAfter)).toBeGreaterThan(0);
    // The grace is 2 s; far less than the query (minutes) or the 30 s shutdown limit.
    expect(closeMs).toBeLessThan(20_000);
  }, 60_000);
});
