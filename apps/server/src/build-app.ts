import Fastify, { type FastifyInstance } from 'fastify';
import type { GovernorConfig } from '@governor/conventions';
import type { Store } from '@governor/store';
import { healthPlugin } from './api/health-plugin.ts';
import { sqlPlugin } from './api/sql-plugin.ts';
import { toGovernorError } from './errors.ts';
import type { IngestPipeline } from './otlp/ingest-pipeline.ts';
import { otlpHttpPlugin } from './otlp/otlp-http-plugin.ts';

export interface AppOptions {
  config: GovernorConfig;
  store: Store;
  pipeline: IngestPipeline;
  logger?: boolean | object;
  isShuttingDown?: () => boolean;
}

/** Builds the Fastify app; main.ts only reads config and listens. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config, store, pipeline } = options;
  const app = Fastify({
    logger: options.logger ?? false,
    disableRequestLogging: true,
    bodyLimit: 1024 * 1024,
    genReqId: () => crypto.randomUUID(),
    requestIdHeader: 'x-request-id',
  });

  app.setErrorHandler((error, request, reply) => {
    const gov = toGovernorError(error);
    if (gov.code === 'GOV_ERR_INTERNAL') request.log.error({ err: error }, 'request failed');
    if (gov.retryAfterS !== undefined) reply.header('Retry-After', String(gov.retryAfterS));
    reply
      .code(gov.statusCode)
      .send({ error: { code: gov.code, message: gov.message, requestId: request.id } });
  });
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({
      error: {
        code: 'GOV_ERR_NOT_FOUND',
        message: `no route for ${request.method} ${request.url}`,
        requestId: request.id,
      },
    });
  });

  await app.register(otlpHttpPlugin, { pipeline, maxBodyBytes: config.server.max_body_bytes });
  await app.register(healthPlugin, {
    store,
    maxQueuedRows: config.server.max_queued_spans,
    startedAt: Date.now(),
    isShuttingDown: options.isShuttingDown ?? (() => false),
  });
  await app.register(sqlPlugin, { store, defaultLimit: 1000, timeoutMs: 10_000 });
  return app;
}
