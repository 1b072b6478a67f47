import { request as httpRequest } from 'node:http';
import { encodeTraceRequestProtobuf } from '../../packages/otlp/src/index.ts';
import { syntheticTraceRequest } from '../../packages/otlp/src/fixtures/index.ts';

// A load generator for the process-level ingest tests: each client sends unique OTLP/HTTP
// protobuf batches back to back and remembers exactly which span ids were acknowledged (200).

export interface IngestLoad {
  /** Span ids of every batch answered 200. */
  acked(): ReadonlySet<string>;
  ackedBatches(): number;
  /** Requests that failed (connection refused/reset, 503 while stopping…). */
  failures(): number;
  /** Stops sending and waits for the requests in flight. */
  stop(): Promise<void>;
}

export function startIngestLoad(
  url: string,
  options: { clients: number; spansPerBatch: number },
): IngestLoad {
  const acked = new Set<string>();
  let batches = 0;
  let failures = 0;
  let stopped = false;
  let batchSeq = 0;
  const nonce = Math.floor(Math.random() * 0xffff);
  const runNonce = nonce.toString(16).padStart(4, '0');
  const send = (body: Buffer) =>
    new Promise<number>((resolve) => {
      const req = httpRequest(
        `${url}/v1/traces`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-protobuf', 'content-length': body.length },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
          res.on('error', () => resolve(0));
        },
      );
      req.on('error', () => resolve(0));
      req.end(body);
    });
  const client = async () => {
    while (!stopped) {
      const seq = ++batchSeq;
      const request = syntheticTraceRequest({
        spans: options.spansPerBatch,
        seed: seq * 0x10000 + nonce,
        startNs: BigInt(Date.now()) * 1_000_000n,
        idPrefix: `${runNonce}${(seq % 0x10000).toString(16).padStart(4, '0')}`,
      });
      const spanIds = request.resourceSpans.flatMap((rs) =>
        rs.scopeSpans.flatMap((ss) => ss.spans.map((s) => s.spanId)),
      );
      const status = await send(Buffer.from(encodeTraceRequestProtobuf(request)));
      if (status === 200) {
        batches++;
        for (const id of spanIds) acked.add(id);
      } else {
        failures++;
        // The server is gone or stopping: back off a little instead of spinning.
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  };
  const running = Promise.all(Array.from({ length: options.clients }, client));
  return {
    acked: () => acked,
    ackedBatches: () => batches,
    failures: () => failures,
    async stop() {
      stopped = true;
      await running;
    },
  };
}

/** Resolves once `condition()` holds, checking every `everyMs`; rejects after `timeoutMs`. */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 60_000,
  everyMs = 25,
) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Every span id stored, via POST /api/sql (at most 100,000). */
export async function storedSpanIds(url: string): Promise<Set<string>> {
  const response = await fetch(`${url}/api/sql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sql: 'SELECT span_id FROM spans', limit: 100_000 }),
  });
  const body = (await response.json()) as { rows: [string][]; truncated: boolean };
  if (response.status !== 200)
    throw new Error(`POST /api/sql answered ${response.status}: ${JSON.stringify(body)}`);
  if (body.truncated) throw new Error('more than 100,000 spans stored; count in SQL instead');
  return new Set(body.rows.map((r) => r[0]));
}
