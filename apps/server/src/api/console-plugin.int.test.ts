import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toGovernorError } from '../errors.ts';
import { type ConsoleBootstrap, consolePlugin, injectBootstrap } from './console-plugin.ts';

async function createApp(distDir: string, bootstrap?: ConsoleBootstrap): Promise<FastifyInstance> {
  const app = Fastify();
  app.setErrorHandler((error, _request, reply) => {
    const gov = toGovernorError(error);
    reply.code(gov.statusCode).send({ error: { code: gov.code, message: gov.message } });
  });
  app.get('/api/health', async () => ({ status: 'ok' }));
  await app.register(consolePlugin, bootstrap ? { distDir, bootstrap } : { distDir });
  return app;
}

describe('console plugin', () => {
  let dir: string;
  let app: FastifyInstance;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gov-console-'));
    app = await createApp(dir);
  });
  afterEach(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('tells the user how to build the console when dist is missing', async () => {
    const response = await app.inject('/');
    expect(response.statusCode).toBe(503);
    expect(response.headers['content-type']).toContain('text/html');
    expect(response.body).toContain('pnpm --filter @governor/console build');
  });

  it('serves files, falls back to index.html for client routes, and keeps API misses JSON', async () => {
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><div id="root"></div>');
    writeFileSync(join(dir, 'assets', 'app-1234.js'), 'console.log(1)');

    const index = await app.inject('/?view=traces&traceId=abc');
    expect(index.statusCode).toBe(200);
    expect(index.body).toContain('id="root"');
    expect(index.headers['cache-control']).toBe('no-cache');

    const asset = await app.inject('/assets/app-1234.js');
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['content-type']).toContain('javascript');
    expect(asset.headers['cache-control']).toContain('immutable');

    const clientRoute = await app.inject('/traces/some/deep/link');
    expect(clientRoute.statusCode).toBe(200);
    expect(clientRoute.body).toContain('id="root"');

    expect((await app.inject('/assets/old-hash.js')).statusCode).toBe(404);
    const apiMiss = await app.inject('/api/nope');
    expect(apiMiss.statusCode).toBe(404);
    expect(apiMiss.json().error.code).toBe('GOV_ERR_NOT_FOUND');
    expect((await app.inject('/api/health')).json()).toEqual({ status: 'ok' });
  });

  it('never serves files outside dist', async () => {
    writeFileSync(join(dir, 'index.html'), 'index');
    const response = await app.inject('/..%2F..%2Fetc%2Fpasswd');
    expect(response.body).not.toContain('root:');
  });

  it('writes the SLO into index.html for the charts', async () => {
    writeFileSync(join(dir, 'index.html'), '<html><head><title>x</title></head><body></body></html>');
    const withSlo = await createApp(dir, { slo: { ttftMs: 800, e2eMs: null } });
    const body = (await withSlo.inject('/?view=fleet')).body;
    expect(body).toContain(
      '<script type="application/json" id="governor-bootstrap">{"slo":{"ttftMs":800,"e2eMs":null}}</script></head>',
    );
    await withSlo.close();
  });
});

describe('injectBootstrap', () => {
  it('cannot be used to close the script element', () => {
    const html = injectBootstrap('<head></head>', {
      slo: { ttftMs: null, e2eMs: null },
      note: '</script><script>',
    } as never);
    expect(html).not.toContain('</script><script>');
    expect(html).toContain('\\u003c/script>');
  });
});
