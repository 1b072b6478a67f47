import type { GovernorConfig } from '@governor/conventions';
import { type Store, createStore } from '@governor/store';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './build-app.ts';
import { type IngestPipeline, createIngestPipeline } from './otlp/ingest-pipeline.ts';
import { type OtlpGrpcServer, startOtlpGrpcServer } from './otlp/otlp-grpc-server.ts';

export interface RunningGovernor {
  httpUrl: string;
  httpPort: number;
  grpcPort: number;
  app: FastifyInstance;
  store: Store;
  pipeline: IngestPipeline;
  /** Stops intake, flushes the write queue, checkpoints and closes the database. */
  close(): Promise<void>;
}

export interface StartOptions {
  config: GovernorConfig;
  logger?: boolean | object;
}

export async function startGovernor({ config, logger }: StartOptions): Promise<RunningGovernor> {
  const store = await createStore({
    dataDir: config.server.data_dir,
    maxQueuedRows: config.server.max_queued_spans,
    checkpointIntervalMs: config.server.checkpoint_interval_s * 1000,
  });
  const pipeline = createIngestPipeline(store, config);
  let shuttingDown = false;
  const app = await buildApp({ config, store, pipeline, logger, isShuttingDown: () => shuttingDown });
  let grpc: OtlpGrpcServer | null = null;
  try {
    await app.listen({ host: config.server.host, port: config.server.http_port });
    grpc = await startOtlpGrpcServer({
      pipeline,
      host: config.server.host,
      port: config.server.grpc_port,
      maxBodyBytes: config.server.max_body_bytes,
    });
  } catch (error) {
    await app.close();
    await store.close();
    throw error;
  }
  const address = app.server.address();
  const httpPort = typeof address === 'object' && address ? address.port : config.server.http_port;
  const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
  let closing: Promise<void> | null = null;
  return {
    httpUrl: `http://${host}:${httpPort}`,
    httpPort,
    grpcPort: grpc.port,
    app,
    store,
    pipeline,
    close() {
      closing ??= (async () => {
        shuttingDown = true;
        await Promise.all([app.close(), grpc?.close()]);
        await store.close();
      })();
      return closing;
    },
  };
}
