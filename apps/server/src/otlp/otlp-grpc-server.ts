import * as grpc from '@grpc/grpc-js';
import { encodeExportResponseProtobuf } from '@governor/otlp';
import { toGovernorError } from '../errors.ts';
import { grpcCodeForHttpStatus, otlpErrorMessage } from './grpc-code-for-http-status.ts';
import type { IngestPipeline, OtlpSignal } from './ingest-pipeline.ts';

// OTLP/gRPC receiver (TraceService/Export, MetricsService/Export). Messages pass through as raw
// bytes and go down the same decode → normalize → write chain as OTLP/HTTP protobuf.

const passThrough = {
  requestSerialize: (value: Buffer) => value,
  requestDeserialize: (value: Buffer) => value,
  responseSerialize: (value: Buffer) => value,
  responseDeserialize: (value: Buffer) => value,
};

function serviceFor(signal: OtlpSignal): grpc.ServiceDefinition {
  const pkg = signal === 'traces' ? 'trace' : 'metrics';
  const service = signal === 'traces' ? 'TraceService' : 'MetricsService';
  return {
    Export: {
      path: `/opentelemetry.proto.collector.${pkg}.v1.${service}/Export`,
      requestStream: false,
      responseStream: false,
      originalName: 'export',
      ...passThrough,
    },
  } as grpc.ServiceDefinition;
}

export interface OtlpGrpcServer {
  port: number;
  close(): Promise<void>;
}

export interface OtlpGrpcOptions {
  pipeline: IngestPipeline;
  host: string;
  port: number;
  maxBodyBytes: number;
  /** Returns an error message when the call's metadata lacks a token with the ingest scope. */
  authorize?: (metadata: grpc.Metadata) => { code: grpc.status; message: string } | null;
}

export async function startOtlpGrpcServer(options: OtlpGrpcOptions): Promise<OtlpGrpcServer> {
  const server = new grpc.Server({
    'grpc.max_receive_message_length': options.maxBodyBytes,
    'grpc.max_send_message_length': 4 * 1024 * 1024,
  });
  const handler =
    (signal: OtlpSignal): grpc.handleUnaryCall<Buffer, Buffer> =>
    (call, callback) => {
      const denied = options.authorize?.(call.metadata) ?? null;
      if (denied) {
        callback({ code: denied.code, details: denied.message });
        return;
      }
      options.pipeline.ingest(signal, call.request, 'protobuf').then(
        (result) => callback(null, Buffer.from(encodeExportResponseProtobuf(result))),
        (error) => {
          const gov = toGovernorError(error);
          const metadata = new grpc.Metadata();
          if (gov.retryAfterS !== undefined) metadata.set('retry-after', String(gov.retryAfterS));
          callback({
            code: grpcCodeForHttpStatus(gov.statusCode) as grpc.status,
            details: otlpErrorMessage(gov),
            metadata,
          });
        },
      );
    };
  server.addService(serviceFor('traces'), { Export: handler('traces') });
  server.addService(serviceFor('metrics'), { Export: handler('metrics') });
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(
      `${options.host}:${options.port}`,
      grpc.ServerCredentials.createInsecure(),
      (error, port) => (error ? reject(error) : resolve(port)),
    );
  });
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 5000).unref();
      }),
  };
}
