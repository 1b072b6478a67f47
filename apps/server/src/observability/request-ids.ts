import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

// x-request-id in and out: a caller's id is reused when it is a sane token (so a proxy's id
// follows the request into Governor's log), otherwise a UUID is made. Every reply carries it.

const SAFE_ID = /^[\w.:@/+=-]{1,128}$/;

/** Fastify `genReqId`: the caller's x-request-id when safe to log, else a new UUID. */
export function requestIdFor(request: IncomingMessage): string {
  const header = request.headers['x-request-id'];
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && SAFE_ID.test(value) ? value : randomUUID();
}

/**
 * Echoes the request id on every reply and logs each finished request: debug for success,
 * info for client errors, warn for server errors (ingest at thousands of requests/s would
 * drown an info log otherwise).
 */
export function registerRequestLogging(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    const status = reply.statusCode;
    const entry = {
      method: request.method,
      route: request.routeOptions.url ?? null,
      status,
      ms: Math.round(reply.elapsedTime * 10) / 10,
      token: request.principal?.name,
    };
    if (status >= 500) request.log.warn(entry, 'request failed');
    else if (status >= 400) request.log.info(entry, 'request refused');
    else request.log.debug(entry, 'request done');
  });
}
