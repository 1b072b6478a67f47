import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningGovernor, startGovernor } from '../../apps/server/src/index.ts';
import { GovernorConfig } from '../../packages/conventions/src/index.ts';
import { encodeTraceRequestProtobuf } from '../../packages/otlp/src/index.ts';
import { syntheticTraceRequest } from '../../packages/otlp/src/fixtures/index.ts';

// A real Governor on ephemeral ports in a fresh temp dir, with one token per scope, plus a
// background OTLP/HTTP load that counts what Governor acknowledged.

export const TEST_TOKENS = {
  ingest: 'security-ingest-token-0001',
  read: 'security-read-token-000001',
  admin: 'security-admin-token-00001',
} as const;

export interface GovernorUnderTest {
  governor: RunningGovernor;
  dataDir: string;
  url: string;
  sql(sql: string, limit?: number): Promise<{ status: number; body: SqlBody }>;
  close(): Promise<void>;
}

export interface SqlBody {
  columns?: { name: string; type: string }[];
  rows?: unknown[][];
  truncated?: boolean;
  error?: { code: string; message: string };
}

export async function startGovernorUnderTest(
  overrides: Record<string, unknown> = {},
): Promise<GovernorUnderTest> {
  const dataDir = mkdtempSync(join(tmpdir(), 'governor-security-'));
  const raw = {
    ...overrides,
    server: { http_port: 0, grpc_port: 0, data_dir: dataDir, ...((overrides.server as object) ?? {}) },
  };
  const governor = await startGovernor({
    config: GovernorConfig.parse(raw),
    env: {
      GOVERNOR_TOKENS: `collector:ingest:${TEST_TOKENS.ingest},analyst:read:${TEST_TOKENS.read}`,
      GOVERNOR_ADMIN_TOKEN: TEST_TOKENS.admin,
    },
  });
  return {
    governor,
    dataDir,
    url: governor.httpUrl,
    async sql(sql, limit) {
      const response = await fetch(`${governor.httpUrl}/api/sql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_TOKENS.read}` },
        body: JSON.stringify(limit === undefined ? { sql } : { sql, limit }),
      });
      return { status: response.status, body: (await response.json()) as SqlBody };
    },
    async close() {
      await governor.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface IngestLoad {
  /** Spans in requests Governor answered 200 with no partial rejection. */
  readonly ackedSpans: number;
  readonly failures: string[];
  /** Ack count observed so far; compare before/after a window to prove ingest kept going. */
  ackedRequests(): number;
  /** Answers of 503/429 with Retry-After (back-pressure), each retried after the time it named. */
  refusedRequests(): number;
  stop(): Promise<void>;
}

/** Posts 100-span protobuf batches back to back on `concurrency` lanes until stopped. */
export function startIngestLoad(
  url: string,
  options: { concurrency: number; startNs: bigint; spansPerRequest?: number },
): IngestLoad {
  const spansPerRequest = options.spansPerRequest ?? 100;
  let stopped = false;
  let acked = 0;
  let requests = 0;
  let sequence = 0;
  let refused = 0;
  const failures: string[] = [];
  const lane = async () => {
    while (!stopped) {
      const n = sequence++;
      const body = encodeTraceRequestProtobuf(
        syntheticTraceRequest({
          spans: spansPerRequest,
          seed: n + 1,
          startNs: options.startNs + BigInt(n) * 1_000_000_000n,
          idPrefix: n.toString(16).padStart(8, '0'),
        }),
      );
      for (;;) {
        const response = await fetch(`${url}/v1/traces`, {
          method: 'POST',
          headers: {
            'content-type': 'application/x-protobuf',
            authorization: `Bearer ${TEST_TOKENS.ingest}`,
          },
          body: Buffer.from(body),
        });
        const bytes = Buffer.from(await response.arrayBuffer());
        const retryAfterS = Number(response.headers.get('retry-after') ?? Number.NaN);
        // Back-pressure, taken as an OTLP exporter takes it: wait as told, send the same batch again.
        // (Once stopped, a refused batch is dropped: it was never acknowledged.)
        if ((response.status === 503 || response.status === 429) && retryAfterS > 0) {
          refused++;
          if (stopped) break;
          await new Promise((resolve) => setTimeout(resolve, retryAfterS * 1000));
          continue;
        }
        // An ExportTraceServiceResponse without partial_success is empty.
        if (response.status === 200 && bytes.length === 0) {
          acked += spansPerRequest;
          requests++;
        } else failures.push(`HTTP ${response.status} (${bytes.length} bytes) for batch ${n}`);
        break;
      }
    }
  };
  const lanes = Array.from({ length: options.concurrency }, lane);
  return {
    get ackedSpans() {
      return acked;
    },
    failures,
    refusedRequests: () => refused,
    ackedRequests: () => requests,
    async stop() {
      stopped = true;
      await Promise.all(lanes);
    },
  };
}

/** Resolves once `condition` holds, checking on every macrotask turn (no fixed sleeps). */
export async function waitFor(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
