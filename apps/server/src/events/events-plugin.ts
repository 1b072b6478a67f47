import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { useZodSchemas } from '../api/zod-validation.ts';
import type { EventBus, PublishedEvent } from './event-bus.ts';

export interface EventsPluginOptions {
  bus: EventBus;
  /** Comment line sent when idle so proxies keep the stream open. */
  heartbeatMs?: number;
}

/**
 * GET /api/events — Server-Sent Events. `?types=recommendation.,control.action` keeps events whose
 * type starts with one of the prefixes. `Last-Event-ID` (or `?lastEventId=`) replays buffered events
 * after that id. Each event: `id: <n>`, `event: <type>`, `data: {"type","data","publishedAt"}`.
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
      const send = (e: PublishedEvent) => {
        if (!wanted(e)) return;
        raw.write(
          `id: ${e.id}\nevent: ${e.type}\ndata: ${JSON.stringify({ type: e.type, data: e.data, publishedAt: e.publishedAt })}\n\n`,
        );
      };
      raw.write(': connected\nretry: 3000\n\n');
      if (Number.isFinite(lastId)) for (const e of options.bus.replay(lastId)) send(e);
      const unsubscribe = options.bus.subscribe(send);
      const heartbeat = setInterval(() => raw.write(': ping\n\n'), options.heartbeatMs ?? 15_000);
      heartbeat.unref();
      const end = () => {
        clearInterval(heartbeat);
        unsubscribe();
        open.delete(end);
        if (!raw.writableEnded) raw.end();
      };
      open.add(end);
      request.raw.on('close', end);
    },
  );
}
