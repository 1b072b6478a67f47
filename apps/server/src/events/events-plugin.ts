import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { useZodSchemas } from '../api/zod-validation.ts';
import type { EventBus, PublishedEvent } from './event-bus.ts';

export interface EventsPluginOptions {
  bus: EventBus;
  /** Comment line sent when idle so proxies keep the stream open. */
  heartbeatMs?: number;
  /** Bytes held for a subscriber that does not read; past it the subscriber is dropped. Default 1 MiB. */
  maxBacklogBytes?: number;
}

/** Event type of the last event a dropped subscriber gets, before the stream ends. */
export const DROPPED_EVENT_TYPE = 'stream.dropped';
/** A dropped subscriber that does not read its last event is cut this long after it. */
const DROPPED_GRACE_MS = 10_000;

/**
 * GET /api/events — Server-Sent Events. `?types=recommendation.,control.action` keeps events whose
 * type starts with one of the prefixes. `Last-Event-ID` (or `?lastEventId=`) replays buffered events
 * after that id. Each event: `id: <n>`, `event: <type>`, `data: {"type","data","publishedAt"}`.
 *
 * Back-pressure: while the socket does not take more (`write` returned false) events wait in a
 * backlog until it drains. A subscriber whose backlog passes `maxBacklogBytes` has fallen behind
 * for good: it is dropped with a last `stream.dropped` event naming the last id it was sent (so an
 * EventSource reconnects with Last-Event-ID and replays what is still buffered), and the stream ends.
 */
export async function eventsPlugin(app: FastifyInstance, options: EventsPluginOptions): Promise<void> {
  useZodSchemas(app);
  const open = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const end of [...open]) end();
  });

  app.get<{ Querystring: { types?: string; lastEventId?: string; access_token?: string } }>(
    '/api/events',
    {
      schema: {
        summary: 'Live events as Server-Sent Events',
        description:
          'Each event: `id: <n>`, `event: <type>`, `data: {"type","data","publishedAt"}`. Types: recommendation.created, recommendation.updated, control.action, alert.pending, alert.firing, alert.resolved, alert.delivery. Send `Last-Event-ID` (or `?lastEventId=`) to replay buffered events after that id. EventSource cannot set headers, so `?access_token=` is accepted here.',
        tags: ['system'],
        produces: ['text/event-stream'],
        querystring: z.object({
          types: z
            .string()
            .optional()
            .describe('Comma-separated type prefixes to keep, e.g. recommendation.,control.action'),
          lastEventId: z.string().optional().describe('Replay buffered events after this id'),
          access_token: z.string().optional().describe('Bearer token, for EventSource clients'),
        }),
        response: {
          200: {
            description: 'An endless text/event-stream',
            content: { 'text/event-stream': { schema: z.string() } },
          },
        },
      },
    },
    async (request, reply) => {
      const query = request.query;
      const prefixes = (query.types ?? '')
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t.length > 0);
      const wanted = (e: PublishedEvent) =>
        prefixes.length === 0 || prefixes.some((p) => e.type.startsWith(p));
      const lastId = Number(request.headers['last-event-id'] ?? query.lastEventId ?? Number.NaN);

      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
        'x-request-id': String(request.id),
      });
      const maxBacklogBytes = options.maxBacklogBytes ?? 1024 * 1024;
      let backlog: { chunk: string; id: number | null }[] = [];
      let backlogBytes = 0;
      let blocked = false;
      /** Id of the last event handed to the socket (what a reconnect resumes after). */
      let sentId = Number.isFinite(lastId) ? lastId : 0;
      const write = (chunk: string, id: number | null) => {
        if (raw.writableEnded) return;
        if (blocked) {
          backlog.push({ chunk, id });
          backlogBytes += Buffer.byteLength(chunk);
          if (backlogBytes > maxBacklogBytes) drop();
          return;
        }
        blocked = !raw.write(chunk);
        if (id !== null) sentId = id;
      };
      const send = (e: PublishedEvent) => {
        if (!wanted(e) || raw.writableEnded) return;
        write(
          `id: ${e.id}\nevent: ${e.type}\ndata: ${JSON.stringify({ type: e.type, data: e.data, publishedAt: e.publishedAt })}\n\n`,
          e.id,
        );
      };
      raw.on('drain', () => {
        blocked = false;
        const pending = backlog;
        backlog = [];
        backlogBytes = 0;
        for (const { chunk, id } of pending) write(chunk, id);
      });
      raw.write(': connected\nretry: 3000\n\n');
      if (Number.isFinite(lastId)) for (const e of options.bus.replay(lastId)) send(e);
      const unsubscribe = options.bus.subscribe(send);
      const heartbeat = setInterval(() => {
        if (!blocked) write(': ping\n\n', null);
      }, options.heartbeatMs ?? 15_000);
      heartbeat.unref();
      const end = () => {
        clearInterval(heartbeat);
        unsubscribe();
        open.delete(end);
        if (!raw.writableEnded) raw.end();
      };
      // The subscriber has fallen behind past the bound: say why and end the stream; a client
      // that never reads that far is cut after a grace period.
      const drop = () => {
        backlog = [];
        backlogBytes = 0;
        const reason = `this subscriber fell more than ${maxBacklogBytes} bytes behind and was disconnected; reconnect with Last-Event-ID ${sentId} to replay what is still buffered`;
        raw.write(
          `event: ${DROPPED_EVENT_TYPE}\ndata: ${JSON.stringify({ type: DROPPED_EVENT_TYPE, data: { reason, lastEventId: sentId }, publishedAt: new Date().toISOString() })}\n\n`,
        );
        // Disconnect once the client has read that far (not back to keep-alive), or after a grace
        // period; the response lets go of its socket when it finishes, so hold on to it here.
        const socket = raw.socket;
        raw.once('finish', () => socket?.destroy());
        end();
        setTimeout(() => socket?.destroy(), DROPPED_GRACE_MS).unref();
      };
      open.add(end);
      request.raw.on('close', end);
    },
  );
}
