import { createServer } from 'node:http';
import type { AddressInfo, Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runSimulation } from '../run-simulation.ts';

// A stand-in for Governor that speaks the documented contract: OTLP/HTTP JSON in, and
// POST /api/control/evaluate {at} → EvaluateResponse. It records what it had received at each call.

interface EvaluateCall {
  at: string;
  traceIdsReceived: Set<string>;
}

async function startGovernorStub(respond: (call: number, at: string) => { status: number; body: unknown }) {
  const calls: EvaluateCall[] = [];
  const traceIds = new Set<string>();
  const rootEnds = new Map<string, bigint>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      if (req.url === '/v1/traces') {
        for (const rs of body.resourceSpans ?? [])
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? []) {
              if (s.parentSpanId) continue;
              traceIds.add(s.traceId);
              rootEnds.set(s.traceId, BigInt(s.endTimeUnixNano));
            }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      if (req.url === '/v1/metrics') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      if (req.url === '/api/control/evaluate' && req.method === 'POST') {
        calls.push({ at: body.at, traceIdsReceived: new Set(traceIds) });
        const reply = respond(calls.length, body.at);
        res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body));
        return;
      }
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, calls, rootEnds, server };
}

const close = (server: Server) =>
  new Promise<void>((resolve) => {
    (server as unknown as { closeAllConnections(): void }).closeAllConnections();
    server.close(() => resolve());
  });

describe('lockstep control', () => {
  let server: Server | null = null;
  afterEach(async () => {
    if (server) await close(server);
    server = null;
  });

  it('flushes telemetry, asks Governor at every control interval and applies the returned actions', async () => {
    const scale = {
      id: 'act-1',
      recommendationId: 'rec-1',
      type: 'apply',
      kind: 'scale',
      target: { pool: 'llama70b-h100-east' },
      action: { from: 2, to: 3 },
      at: '',
    };
    const stub = await startGovernorStub((call, at) => ({
      status: 200,
      body: { at, recommendations: [], actions: call === 2 || call === 3 ? [{ ...scale, at }] : [] },
    }));
    server = stub.server;
    const lines: string[] = [];
    const summary = await runSimulation({
      workload: 'azure-conv',
      durationMs: 5 * 60_000,
      lockstep: stub.url,
      log: (line) => lines.push(line),
    });
    const start = Date.parse(summary.simStart);
    expect(stub.calls.length).toBe(summary.lockstep!.calls);
    expect(stub.calls.length).toBeGreaterThanOrEqual(10);
    for (const [i, call] of stub.calls.entries()) expect(Date.parse(call.at)).toBe(start + (i + 1) * 30_000);
    // Every request that ended before a tick had been delivered before Governor was asked.
    for (const call of stub.calls) {
      const atNs = BigInt(Date.parse(call.at)) * 1_000_000n;
      for (const [traceId, endNs] of stub.rootEnds) {
        if (endNs <= atNs) expect(call.traceIdsReceived.has(traceId)).toBe(true);
      }
    }
    expect(summary.lockstep).toMatchObject({ failures: 0, actionsReceived: 2, actionsApplied: 1 });
    expect(summary.pools.find((p) => p.pool === 'llama70b-h100-east')!.replicasMax).toBe(3);
    expect(summary.telemetry!.spansExported).toBe(summary.telemetry!.spansEmitted);
    expect(lines).toEqual([]);
  });

  it('reports a failing Governor clearly and finishes the run', async () => {
    const stub = await startGovernorStub(() => ({ status: 500, body: { error: 'boom' } }));
    server = stub.server;
    const lines: string[] = [];
    const summary = await runSimulation({
      workload: 'burstgpt-1',
      durationMs: 3 * 60_000,
      lockstep: stub.url,
      log: (l) => lines.push(l),
    });
    expect(summary.lockstep!.failures).toBe(summary.lockstep!.calls);
    expect(summary.lockstep!.lastError).toContain('HTTP 500');
    expect(lines[0]).toContain('lockstep: evaluate at');
    expect(lines[0]).toContain('continuing without actions');
    expect(summary.tasks).toBeGreaterThan(0);
  });
});
