import { type Socket, connect } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { type EventBus, createEventBus } from './event-bus.ts';
import { DROPPED_EVENT_TYPE, eventsPlugin } from './events-plugin.ts';

// A subscriber that stops reading cannot make Governor buffer without bound: once its backlog
// passes the cap it is dropped with a last event saying why, while a subscriber that reads gets
// every event.

const EVENTS = 1_500;
const PAYLOAD = 'x'.repeat(16 * 1024);
let app: FastifyInstance | null = null;
let sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets) s.destroy();
  sockets = [];
  await app?.close();
  app = null;
});

async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const started = performance.now();
  while (!condition()) {
    if (performance.now() - started > timeoutMs) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

/** A raw HTTP client that reads the response head and then stops reading. */
function openSlowSubscriber(port: number): Promise<{ socket: Socket; received: () => string }> {
  return new Promise((resolve, reject) => {
    let text = '';
    let paused = false;
    const socket = connect(port, '127.0.0.1', () => {
      socket.write('GET /api/events HTTP/1.1\r\nHost: governor\r\nAccept: text/event-stream\r\n\r\n');
    });
    sockets.push(socket);
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (!paused && text.includes(': connected')) {
        paused = true;
        socket.pause();
        resolve({ socket, received: () => text });
      }
    });
    socket.once('error', reject);
  });
}

describe('GET /api/events', () => {
  it('drops a subscriber that stops reading, with a last event saying why, and keeps one that reads', async () => {
    const bus: EventBus = createEventBus();
    app = Fastify();
    await app.register(eventsPlugin, { bus });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const port = (app.server.address() as { port: number }).port;

    const slow = await openSlowSubscriber(port);
    const healthy = await fetch(`http://127.0.0.1:${port}/api/events`);
    const reader = healthy.body!.getReader();
    let healthyText = '';
    const decoder = new TextDecoder();
    const reading = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        healthyText += decoder.decode(value, { stream: true });
      }
    })();
    await until(() => bus.listenerCount() === 2, 5_000);

    for (let i = 0; i < EVENTS; i++) {
      bus.publish({ type: 'recommendation.created', data: { i, payload: PAYLOAD } });
      // A steady stream, not one burst: the reading subscriber keeps up between events.
      await new Promise((r) => setImmediate(r));
    }
    // Tens of MiB were published; the slow subscriber is dropped once the kernel's socket buffers
    // and its 1 MiB backlog are full, the reading one stays.
    expect(await until(() => bus.listenerCount() === 1, 10_000)).toBe(true);
    const count = (text: string) => text.split('event: recommendation.created').length - 1;
    expect(await until(() => count(healthyText) === EVENTS, 20_000)).toBe(true);

    // Reading again, the slow client gets what was already sent, then the reason, then the end.
    slow.socket.resume();
    const ended = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 10_000);
      slow.socket.once('end', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    expect(ended).toBe(true);
    const text = slow.received();
    const last = text.slice(text.lastIndexOf('event: '));
    expect(last.startsWith(`event: ${DROPPED_EVENT_TYPE}\n`)).toBe(true);
    const data = JSON.parse(/^data: (.*)$/m.exec(last)![1]!) as {
      data: { reason: string; lastEventId: number };
    };
    expect(data.data.reason).toMatch(/fell more than 1048576 bytes behind/);
    // It names the last event it was sent, so a reconnect with Last-Event-ID resumes there.
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.length).toBeLessThan(EVENTS);
    expect(data.data.lastEventId).toBe(ids.at(-1));
    console.log(
      `SSE: the slow subscriber got ${ids.length} of ${EVENTS} events (16 KiB each) before it was dropped; the reading one got all`,
    );
    await reader.cancel();
    await reading.catch(() => undefined);
  }, 60_000);
});
