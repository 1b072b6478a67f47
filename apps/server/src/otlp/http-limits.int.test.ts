import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GovernorConfig } from '@governor/conventions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningGovernor, startGovernor } from '../start-governor.ts';

// Slow and idle clients cannot hold Governor's HTTP listener: a body dripped one byte at a time
// is cut at the request timeout, headers that never finish at the header timeout, and
// connections past the cap are refused.

const LIMITS = { requestTimeoutMs: 1_500, headersTimeoutMs: 1_000, maxConnections: 20 };
let dir: string;
let governor: RunningGovernor;
let port: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'governor-limits-'));
  governor = await startGovernor({
    config: GovernorConfig.parse({
      server: {
        host: '127.0.0.1',
        http_port: 0,
        grpc_port: 0,
        data_dir: dir,
        // Set as an operator would, in the config file's `server:` section.
        request_timeout_ms: LIMITS.requestTimeoutMs,
        headers_timeout_ms: LIMITS.headersTimeoutMs,
        max_connections: LIMITS.maxConnections,
      },
    }),
    env: {},
  });
  port = Number(new URL(governor.httpUrl).port);
});
afterAll(async () => {
  await governor?.close();
  rmSync(dir, { recursive: true, force: true });
});

function open(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Ms until the server ends the connection (or `giveUpMs`), and what it answered. */
function whenClosed(socket: Socket, giveUpMs: number): Promise<{ ms: number; answer: string }> {
  const started = performance.now();
  let answer = '';
  socket.on('data', (c: Buffer) => {
    answer += c.toString();
  });
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ ms: Number.POSITIVE_INFINITY, answer }), giveUpMs);
    const done = () => {
      clearTimeout(timer);
      resolve({ ms: performance.now() - started, answer });
    };
    socket.once('close', done);
    socket.once('error', () => undefined);
  });
}

describe('HTTP limits', () => {
  it('cuts an upload that drips one byte at a time at the request timeout', async () => {
    const sockets = await Promise.all(Array.from({ length: 5 }, open));
    const closed = sockets.map((s) => whenClosed(s, 8_000));
    for (const s of sockets)
      s.write(
        'POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n',
      );
    const drip = setInterval(() => {
      for (const s of sockets) if (!s.destroyed) s.write('{');
    }, 200);
    try {
      const results = await Promise.all(closed);
      console.log(`slow uploads ended after ${results.map((r) => Math.round(r.ms)).join(', ')} ms`);
      for (const r of results) {
        expect(r.ms).toBeLessThan(LIMITS.requestTimeoutMs + 2_500);
        expect(r.answer).toMatch(/^HTTP\/1\.1 408/);
      }
    } finally {
      clearInterval(drip);
      for (const s of sockets) s.destroy();
    }
  });

  it('cuts headers that never finish at the header timeout', async () => {
    const socket = await open();
    const closed = whenClosed(socket, 8_000);
    socket.write('GET /api/health HTTP/1.1\r\nHost: x\r\n');
    const drip = setInterval(() => !socket.destroyed && socket.write('X-A: b\r\n'), 200);
    try {
      expect((await closed).ms).toBeLessThan(LIMITS.headersTimeoutMs + 2_500);
    } finally {
      clearInterval(drip);
      socket.destroy();
    }
  });

  it('keeps an idle keep-alive connection open longer than the Collector keeps one idle (90 s), not 5 s', async () => {
    const socket = await open();
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
    });
    let closedAfterMs: number | null = null;
    const openedAt = performance.now();
    socket.on('close', () => {
      closedAfterMs = performance.now() - openedAt;
    });
    const ask = async () => {
      received = '';
      socket.write('GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n');
      for (let i = 0; i < 100 && !/\r\n\r\n/.test(received); i++) await new Promise((r) => setTimeout(r, 50));
      return received;
    };
    try {
      expect(await ask()).toMatch(/^HTTP\/1\.1 200[\s\S]*\r\nKeep-Alive: timeout=(\d+)\r\n/i);
      // The OpenTelemetry Collector's HTTP exporters reuse connections idle for up to 90 s.
      expect(Number(/Keep-Alive: timeout=(\d+)/i.exec(received)?.[1])).toBeGreaterThan(90);
      // Past Node's default of 5 s: a client reusing the connection now would have been reset.
      await new Promise((r) => setTimeout(r, 6_000));
      expect(closedAfterMs).toBeNull();
      expect(await ask()).toMatch(/^HTTP\/1\.1 200/);
    } finally {
      socket.destroy();
    }
  }, 20_000);

  it('refuses connections past the cap and keeps serving the rest', async () => {
    const idle = await Promise.all(Array.from({ length: LIMITS.maxConnections + 5 }, open));
    const closed = await Promise.all(idle.map((s) => whenClosed(s, 500)));
    const refused = closed.filter((c) => Number.isFinite(c.ms)).length;
    expect(refused).toBeGreaterThanOrEqual(5);
    for (const s of idle) s.destroy();
    await new Promise((r) => setTimeout(r, 100));
    expect((await fetch(`${governor.httpUrl}/api/health`)).status).toBe(200);
  });
});
