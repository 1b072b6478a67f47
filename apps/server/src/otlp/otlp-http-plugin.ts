import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  encodeExportResponseJson,
  encodeExportResponseProtobuf,
  encodeRpcStatusJson,
  encodeRpcStatusProtobuf,
} from '@governor/otlp';
import { GovernorError, toGovernorError } from '../errors.ts';
import { grpcCodeForHttpStatus, otlpErrorMessage } from './grpc-code-for-http-status.ts';
import type { IngestPipeline, OtlpFormat, OtlpSignal } from './ingest-pipeline.ts';
import { readBody } from './read-body.ts';
import { RAW_OPENAPI, type RawOpenApi } from '../api/register-api-reference.ts';

// OTLP/HTTP receiver: POST /v1/traces and /v1/metrics, protobuf or JSON, optionally gzip'd.
// Errors are google.rpc.Status bodies in the request's own content type, as the spec asks.

export interface OtlpHttpOptions {
  pipeline: IngestPipeline;
  maxBodyBytes: number;
}

function formatOf(contentType: string | undefined): OtlpFormat | null {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/x-protobuf' || type === 'application/protobuf') return 'protobuf';
  if (type === 'application/json') return 'json';
  return null;
}

export async function otlpHttpPlugin(app: FastifyInstance, options: OtlpHttpOptions): Promise<void> {
  // Bodies are read by the handler so the size cap can be enforced while inflating.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));

  app.setErrorHandler((error, request, reply) => {
    const gov = toGovernorError(error);
    if (gov.statusCode >= 500 && gov.code === 'GOV_ERR_INTERNAL')
      request.log.error({ err: error }, 'OTLP request failed');
    sendStatus(request, reply, gov);
  });

  const handle = (signal: OtlpSignal) => async (request: FastifyRequest, reply: FastifyReply) => {
    const format = formatOf(request.headers['content-type']);
    if (format === null) {
      request.raw.resume();
      throw new GovernorError(
        'GOV_ERR_OTLP_UNSUPPORTED_MEDIA_TYPE',
        `Content-Type "${request.headers['content-type'] ?? ''}" is not supported; send application/x-protobuf or application/json`,
      );
    }
    const body = await readBody(request.raw, request.headers['content-encoding'], options.maxBodyBytes);
    const result = await options.pipeline.ingest(signal, body, format);
    if (format === 'protobuf') {
      return reply
        .code(200)
        .type('application/x-protobuf')
        .send(Buffer.from(encodeExportResponseProtobuf(result)));
    }
    return reply.code(200).type('application/json').send(encodeExportResponseJson(result));
  };

  const schema = (signal: OtlpSignal) => ({
    summary: `OTLP/HTTP ${signal} receiver`,
    description: `An OTLP Export${signal === 'traces' ? 'Trace' : 'Metrics'}ServiceRequest as protobuf or JSON, optionally \`Content-Encoding: gzip\`. 200 only after the data is durable (with \`partialSuccess\` when some items were rejected); 400 for an undecodable body, 413 past the size cap (${options.maxBodyBytes} bytes after decompression), 415 for other content types, 429/503 with Retry-After under back-pressure. Errors are google.rpc.Status in the request's content type. OTLP/gRPC is on port 4317.`,
    tags: ['ingest'],
    [RAW_OPENAPI]: otlpOpenApi,
  });
  app.post('/v1/traces', { bodyLimit: options.maxBodyBytes, schema: schema('traces') }, handle('traces'));
  app.post('/v1/metrics', { bodyLimit: options.maxBodyBytes, schema: schema('metrics') }, handle('metrics'));
}

const binary = { type: 'string', format: 'binary' };
const otlpMedia = {
  'application/x-protobuf': { schema: binary },
  'application/json': { schema: { type: 'object', description: 'OTLP/JSON (lowerCamelCase keys, hex ids)' } },
};
const otlpOpenApi: RawOpenApi = {
  body: { content: otlpMedia },
  response: {
    200: { description: 'Export response (partialSuccess when items were rejected)', content: otlpMedia },
    '4xx': {
      description: 'google.rpc.Status: undecodable, too large, unsupported type, auth',
      content: otlpMedia,
    },
    '5xx': { description: 'google.rpc.Status; 503 with Retry-After under back-pressure', content: otlpMedia },
  },
};

function sendStatus(request: FastifyRequest, reply: FastifyReply, error: GovernorError): void {
  const grpcCode = grpcCodeForHttpStatus(error.statusCode);
  if (error.retryAfterS !== undefined) reply.header('Retry-After', String(error.retryAfterS));
  // The rest of an oversized body is being discarded; close the connection once the 413 is out
  // instead of reading it all.
  if (error.statusCode === 413) reply.header('Connection', 'close');
  reply.code(error.statusCode);
  const message = otlpErrorMessage(error);
  if (formatOf(request.headers['content-type']) === 'protobuf') {
    reply.type('application/x-protobuf').send(Buffer.from(encodeRpcStatusProtobuf(grpcCode, message)));
  } else {
    reply.type('application/json').send(encodeRpcStatusJson(grpcCode, message));
  }
}
