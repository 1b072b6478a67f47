import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: unknown;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

export interface TestReceiver {
  url: string;
  port: number;
  /** Answered requests, in arrival order. */
  requests: ReceivedRequest[];
  /** Resolves once at least `count` requests were answered. */
  waitForRequests(count: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/**
 * A real HTTP receiver on 127.0.0.1 (port 0 unless given). `respond` decides each reply and may
 * hold it (return a promise) to play a slow receiver.
 */
export async function startReceiver(
  options: { port?: number; respond?: (request: ReceivedRequest) => Reply | Promise<Reply> } = {},
): Promise<TestReceiver> {
  const requests: ReceivedRequest[] = [];
  const waiters: { count: number; resolve: (r: ReceivedRequest[]) => void }[] = [];
  const readBody = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  };
  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    let json: unknown = null;
    try {
      json = JSON.parse(body);
    } catch {
      json = null;
    }
    const request: ReceivedRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      body,
      json,
    };
    const reply = options.respond ? await options.respond(request) : { status: 200, body: 'ok' };
    res.writeHead(reply.status, reply.headers ?? {});
    res.end(reply.body ?? '');
    requests.push(request);
    for (const w of [...waiters]) {
      if (requests.length >= w.count) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(requests.slice());
      }
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    waitForRequests(count) {
      if (requests.length >= count) return Promise.resolve(requests.slice());
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A port nothing listens on (yet): taken from the OS, then released. */
export async function reservePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
