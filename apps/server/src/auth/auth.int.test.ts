import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { GovernorConfig } from '@governor/conventions';
import { encodeTraceRequestProtobuf } from '@governor/otlp';
import { syntheticTraceRequest, traceRequestToJson } from '@governor/otlp/fixtures';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningGovernor, startGovernor } from '../start-governor.ts';
import { sha256Hex } from './token-registry.ts';

const TOKENS = {
  ingest: 'ingest-token-for-tests-000',
  read: 'read-token-for-tests-00000',
  operate: 'operate-token-for-tests-00',
  admin: 'admin-token-for-tests-0000',
};

let dir: string;
let governor: RunningGovernor;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'governor-auth-'));
  const config = GovernorConfig.parse({
    server: { host: '127.0.0.1', http_port: 0, grpc_port: 0, data_dir: dir },
    auth: {
      tokens: [
        { name: 'collector', token_sha256: sha256Hex(TOKENS.ingest), scopes: ['ingest'] },
        { name: 'grafana', token_env: 'TEST_READ_TOKEN', scopes: ['read'] },
        { name: 'oncall', token_sha256: sha256Hex(TOKENS.operate), scopes: ['operate'] },
      ],
    },
  });
  governor = await startGovernor({
    config,
    env: { TEST_READ_TOKEN: TOKENS.read, GOVERNOR_ADMIN_TOKEN: TOKENS.admin },
  });
});

afterAll(async () => {
  await governor?.close();
  rmSync(dir, { recursive: true, force: true });
});

const request = () => syntheticTraceRequest({ spans: 8, seed: 1, startNs: 1_700_000_000_000_000_000n });
const body = () => Buffer.from(encodeTraceRequestProtobuf(request()));

/** google.rpc.Status from protobuf: field 1 `code` (varint), field 2 `message` (string). */
function readRpcStatus(bytes: Buffer): { code: number; message: string } {
  let pos = 0;
  const varint = () => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const b = bytes[pos++]!;
      value += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return value;
    }
  };
  const status = { code: 0, message: '' };
  while (pos < bytes.length) {
    const key = varint();
    if (key === 0x08) status.code = varint();
    else if ((key & 7) === 2) {
      const length = varint();
      if (key >>> 3 === 2) status.message = bytes.toString('utf8', pos, pos + length);
      pos += length;
    } else throw new Error(`unexpected protobuf key ${key} in google.rpc.Status`);
  }
  return status;
}

async function call(method: string, path: string, token?: string, payload?: unknown) {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  let data: string | Buffer | undefined;
  if (payload instanceof Buffer) {
    headers['content-type'] = 'application/x-protobuf';
    data = payload;
  } else if (payload !== undefined) {
    headers['content-type'] = 'application/json';
    data = JSON.stringify(payload);
  }
  const response = await fetch(`${governor.httpUrl}${path}`, { method, headers, body: data });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text };
}

describe('HTTP auth', () => {
  it('leaves health, readiness and the console open', async () => {
    expect((await call('GET', '/api/health')).status).toBe(200);
    expect((await call('GET', '/api/ready')).status).toBe(200);
    expect((await call('GET', '/')).status).not.toBe(401);
    expect((await call('GET', '/recommendations')).status).not.toBe(401);
  });

  it('answers 401 with WWW-Authenticate and a message naming the scope when no token is sent', async () => {
    const r = await call('POST', '/api/sql', undefined, { sql: 'SELECT 1' });
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const error = JSON.parse(r.text).error;
    expect(error.code).toBe('GOV_ERR_AUTH_MISSING_TOKEN');
    expect(error.message).toContain('scope "read"');
    expect(error.message).toContain('Authorization: Bearer');
  });

  it('answers 401 for an unknown token without echoing it', async () => {
    const r = await call('GET', '/api/dashboards', 'not-a-real-token-123456');
    expect(r.status).toBe(401);
    expect(JSON.parse(r.text).error.code).toBe('GOV_ERR_AUTH_INVALID_TOKEN');
    expect(r.text).not.toContain('not-a-real-token');
  });

  it('answers a malformed Authorization header as an invalid token, not a missing one', async () => {
    for (const header of [`Bearer ${TOKENS.admin} x`, `Basic ${TOKENS.admin}`, TOKENS.admin]) {
      const response = await fetch(`${governor.httpUrl}/api/dashboards`, {
        headers: { authorization: header },
      });
      expect(response.status).toBe(401);
      const body = (await response.json()) as { error: { code: string } };
      expect(body.error.code, header).toBe('GOV_ERR_AUTH_INVALID_TOKEN');
      expect(response.headers.get('www-authenticate')).toContain('invalid_token');
    }
  });

  it('answers 403 naming the missing scope', async () => {
    const r = await call('POST', '/api/sql', TOKENS.ingest, { sql: 'SELECT 1' });
    expect(r.status).toBe(403);
    const error = JSON.parse(r.text).error;
    expect(error.code).toBe('GOV_ERR_AUTH_MISSING_SCOPE');
    expect(error.message).toMatch(/needs scope "read"; token "collector" has "ingest"/);

    const approve = await call('POST', '/api/recommendations/rec-1/approve', TOKENS.read, {});
    expect(approve.status).toBe(403);
    expect(JSON.parse(approve.text).error.message).toContain('scope "operate"');
  });

  it('grants by scope: read reads, operate reads, admin does all, ingest ingests', async () => {
    expect((await call('POST', '/api/sql', TOKENS.read, { sql: 'SELECT 1' })).status).toBe(200);
    expect((await call('POST', '/api/sql', TOKENS.operate, { sql: 'SELECT 1' })).status).toBe(200);
    expect((await call('POST', '/api/sql', TOKENS.admin, { sql: 'SELECT 1' })).status).toBe(200);
    expect((await call('GET', '/api/dashboards', TOKENS.read)).status).toBe(200);
    // Past auth: the route may not exist yet, but the answer is no longer 401/403.
    expect([200, 404]).toContain((await call('POST', '/api/control/evaluate', TOKENS.operate, {})).status);
    expect([200, 404]).toContain((await call('POST', '/api/control/evaluate', TOKENS.admin, {})).status);
  });

  it('protects OTLP/HTTP with the ingest scope', async () => {
    expect((await call('POST', '/v1/traces', undefined, body())).status).toBe(401);
    expect((await call('POST', '/v1/traces', TOKENS.read, body())).status).toBe(403);
    expect((await call('POST', '/v1/traces', TOKENS.ingest, body())).status).toBe(200);
    expect((await call('POST', '/v1/traces', TOKENS.admin, body())).status).toBe(200);
  });

  it('answers refused OTLP/HTTP with google.rpc.Status code 16 UNAUTHENTICATED or 7 PERMISSION_DENIED', async () => {
    const otlp = async (token: string | undefined, format: 'protobuf' | 'json') => {
      const headers: Record<string, string> = {
        'content-type': format === 'json' ? 'application/json' : 'application/x-protobuf',
      };
      if (token) headers.authorization = `Bearer ${token}`;
      const response = await fetch(`${governor.httpUrl}/v1/traces`, {
        method: 'POST',
        headers,
        body: format === 'json' ? JSON.stringify(traceRequestToJson(request())) : body(),
      });
      const bytes = Buffer.from(await response.arrayBuffer());
      expect(response.headers.get('content-type')).toMatch(
        format === 'json' ? /^application\/json/ : /^application\/x-protobuf/,
      );
      const status =
        format === 'json'
          ? (JSON.parse(bytes.toString()) as { code: number; message: string })
          : readRpcStatus(bytes);
      return { http: response.status, code: status.code, message: status.message };
    };
    for (const format of ['protobuf', 'json'] as const) {
      expect(await otlp(undefined, format)).toMatchObject({ http: 401, code: 16, message: /needs a token/ });
      expect(await otlp('not-a-token-anyone-knows-0', format)).toMatchObject({ http: 401, code: 16 });
      expect(await otlp(TOKENS.read, format)).toMatchObject({
        http: 403,
        code: 7,
        message: /needs scope "ingest"/,
      });
    }
  });

  it('does not let encoded or unknown API paths past the hook', async () => {
    expect((await call('POST', '/%61pi/sql', undefined, { sql: 'SELECT 1' })).status).toBe(401);
    expect((await call('GET', '/api/does-not-exist')).status).toBe(401);
    expect((await call('GET', '/api/does-not-exist', TOKENS.read)).status).toBe(404);
    expect((await call('GET', '/metrics')).status).toBe(401);
  });

  it('echoes a safe x-request-id and replaces an unsafe one', async () => {
    const mine = await fetch(`${governor.httpUrl}/api/health`, {
      headers: { 'x-request-id': 'lb-1234.abc' },
    });
    expect(mine.headers.get('x-request-id')).toBe('lb-1234.abc');
    const hostile = await fetch(`${governor.httpUrl}/api/health`, {
      headers: { 'x-request-id': 'a b\tinjected' },
    });
    expect(hostile.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('OTLP/gRPC auth', () => {
  function exportTraces(metadata: grpc.Metadata): Promise<grpc.ServiceError | null> {
    const client = new grpc.Client(`127.0.0.1:${governor.grpcPort}`, grpc.credentials.createInsecure());
    return new Promise((resolve) => {
      client.makeUnaryRequest(
        '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
        (b: Buffer) => b,
        (b: Buffer) => b,
        body(),
        metadata,
        (error) => {
          client.close();
          resolve(error ?? null);
        },
      );
    });
  }
  const withToken = (token?: string) => {
    const m = new grpc.Metadata();
    if (token) m.set('authorization', `Bearer ${token}`);
    return m;
  };

  it('needs a token with the ingest scope in the metadata', async () => {
    expect((await exportTraces(withToken()))?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect((await exportTraces(withToken('wrong-token-000000000000')))?.code).toBe(
      grpc.status.UNAUTHENTICATED,
    );
    const denied = await exportTraces(withToken(TOKENS.read));
    expect(denied?.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(denied?.details).toContain('scope "ingest"');
    expect(await exportTraces(withToken(TOKENS.ingest))).toBeNull();
  });
});

describe('bind address', () => {
  it('refuses 0.0.0.0 without tokens before touching the data directory, and allows it with --insecure', async () => {
    const d = mkdtempSync(join(tmpdir(), 'governor-bind-'));
    try {
      const base = { http_port: 0, grpc_port: 0, data_dir: join(d, 'data'), host: '0.0.0.0' };
      await expect(
        startGovernor({ config: GovernorConfig.parse({ server: base }), env: {} }),
      ).rejects.toThrow(/GOV_ERR_AUTH_INSECURE_BIND/);
      const insecure = await startGovernor({
        config: GovernorConfig.parse({ server: { ...base, insecure: true } }),
        env: {},
      });
      expect((await fetch(`http://127.0.0.1:${insecure.httpPort}/api/health`)).status).toBe(200);
      await insecure.close();
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});
