import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toGovernorError } from '../errors.ts';
import { DEFAULT_DASHBOARDS_DIR, dashboardsPlugin } from './dashboards-plugin.ts';

const valid = {
  title: 'Latency',
  panels: [{ title: 'TTFT', query: { type: 'signal', signal: 'ttftMs.p95', by: 'pool' }, chart: 'line' }],
};

async function createApp(dir: string | null): Promise<FastifyInstance> {
  const app = Fastify();
  app.setErrorHandler((error, _request, reply) => {
    const gov = toGovernorError(error);
    reply.code(gov.statusCode).send({ error: { code: gov.code, message: gov.message } });
  });
  await app.register(dashboardsPlugin, { dir });
  return app;
}

describe('GET /api/dashboards', () => {
  let dir: string;
  let app: FastifyInstance;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gov-dashboards-'));
    app = await createApp(dir);
  });
  afterEach(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists a file added while the server runs', async () => {
    expect((await app.inject('/api/dashboards')).json().dashboards).toEqual([]);
    writeFileSync(join(dir, 'latency.json'), JSON.stringify(valid));
    const body = (await app.inject('/api/dashboards')).json();
    expect(body.dashboards).toEqual([
      { id: 'latency', title: 'Latency', description: null, tags: [], panelCount: 1 },
    ]);
    expect(body.dir).toBe(dir);
  });

  it('reports invalid files with their problems instead of hiding them', async () => {
    writeFileSync(
      join(dir, 'broken.json'),
      JSON.stringify({ title: 'x', panels: [{ title: 'p', chart: 'pie' }] }),
    );
    writeFileSync(join(dir, 'not-json.json'), '{ nope');
    const body = (await app.inject('/api/dashboards')).json();
    expect(body.dashboards).toEqual([]);
    expect(body.invalid.map((f: { file: string }) => f.file)).toEqual(['broken.json', 'not-json.json']);
    expect(body.invalid[0].issues.map((i: { path: string }) => i.path)).toContain('panels.0.chart');
    const one = await app.inject('/api/dashboards/broken');
    expect(one.statusCode).toBe(422);
    expect(one.json().error.code).toBe('GOV_ERR_DASHBOARD_INVALID');
  });

  it('serves one dashboard by id and 404s an unknown or unsafe id', async () => {
    writeFileSync(join(dir, 'latency.json'), JSON.stringify(valid));
    const one = await app.inject('/api/dashboards/latency');
    expect(one.statusCode).toBe(200);
    expect(one.json()).toMatchObject({ id: 'latency', title: 'Latency', panels: [{ width: 'half' }] });
    expect((await app.inject('/api/dashboards/missing')).statusCode).toBe(404);
    expect((await app.inject('/api/dashboards/..%2Fsecrets')).statusCode).toBe(404);
  });

  it('answers an empty list when the folder does not exist', async () => {
    const missing = await createApp(join(dir, 'nope'));
    expect((await missing.inject('/api/dashboards')).json().dashboards).toEqual([]);
    await missing.close();
  });
});

describe('the repository dashboards folder', () => {
  it('is the default and holds the shipped dashboards', async () => {
    const app = await createApp(null);
    const body = (await app.inject('/api/dashboards')).json();
    expect(body.dir).toBe(DEFAULT_DASHBOARDS_DIR);
    expect(body.invalid).toEqual([]);
    expect(body.dashboards.map((d: { id: string }) => d.id)).toEqual(
      expect.arrayContaining(['fleet-overview', 'cost']),
    );
    await app.close();
  });
});
