import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestGovernor, startTestGovernor } from '../otlp/start-test-governor.ts';
import { DOCS_PREFIX, OPENAPI_PATH, registeredRoutes } from './register-api-reference.ts';

// The API reference is generated from the routes' own schemas: every route Governor serves has
// one, and every route shows in /api/openapi.json with its parameters, responses and scope.

type Operation = {
  summary?: string;
  parameters?: { name: string; in: string }[];
  requestBody?: { content: Record<string, unknown> };
  responses: Record<string, unknown>;
  security?: Record<string, string[]>[];
};
type OpenApi = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: {
    securitySchemes: Record<string, { type: string; scheme: string }>;
    schemas: Record<string, unknown>;
  };
};

/** Routes that are not API operations: the reference's own page and document, and the console. */
const isNotAnOperation = (url: string) => url === '/*' || url === OPENAPI_PATH || url.startsWith(DOCS_PREFIX);

let g: TestGovernor;
let doc: OpenApi;

beforeAll(async () => {
  g = await startTestGovernor();
  const response = await fetch(`${g.url}${OPENAPI_PATH}`);
  expect(response.status).toBe(200);
  doc = (await response.json()) as OpenApi;
});
afterAll(async () => {
  await g?.close();
});

describe('the API reference', () => {
  it('has a schema for every route Governor registers: a summary, responses, and its path parameters', () => {
    const routes = registeredRoutes(g.governor.app).filter((r) => !isNotAnOperation(r.url));
    expect(routes.length).toBeGreaterThan(25);
    const missing = routes
      .filter((r) => {
        const s = r.schema;
        if (!s || typeof s.summary !== 'string' || s.hide === true) return true;
        const hasResponse = s.response !== undefined || s['x-openapi'] !== undefined;
        const needsParams = r.url.includes(':');
        return !hasResponse || (needsParams && s.params === undefined);
      })
      .map((r) => `${r.method} ${r.url}`);
    expect(missing).toEqual([]);
  });

  it('hides only the console and the reference itself', () => {
    const hidden = registeredRoutes(g.governor.app)
      .filter((r) => r.schema?.hide === true && !isNotAnOperation(r.url))
      .map((r) => `${r.method} ${r.url}`);
    expect(hidden).toEqual([]);
  });

  it('lists every route as an OpenAPI 3.1 operation', () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    const routes = registeredRoutes(g.governor.app).filter((r) => !isNotAnOperation(r.url));
    const absent = routes
      .filter((r) => {
        const path = r.url.replace(/:([A-Za-z]+)/g, '{$1}');
        return doc.paths[path]?.[r.method.toLowerCase()] === undefined;
      })
      .map((r) => `${r.method} ${r.url}`);
    expect(absent).toEqual([]);
  });

  it('documents the query parameters, bodies and responses from the zod schemas', () => {
    const signals = doc.paths['/api/signals']!.get!;
    expect(signals.parameters?.map((p) => p.name)).toEqual(
      expect.arrayContaining(['window', 'by', 'at', 'pool', 'model']),
    );
    expect(JSON.stringify(signals.responses['200'])).toContain('#/components/schemas/SignalsSnapshot');
    expect(JSON.stringify(doc.components.schemas.SignalGroup)).toContain('successPerDollar');
    const sql = doc.paths['/api/sql']!.post!;
    expect(JSON.stringify(sql.requestBody)).toContain('"sql"');
    expect(JSON.stringify(sql.responses['4XX'])).toContain('#/components/schemas/Error');
    expect(JSON.stringify(doc.components.schemas.Error)).toContain('GOV_ERR_SQL_NOT_READ_ONLY');
    const traces = doc.paths['/v1/traces']!.post!;
    expect(Object.keys(traces.requestBody!.content)).toEqual(['application/x-protobuf', 'application/json']);
    expect(doc.paths['/api/events']!.get!.responses['200']).toMatchObject({
      content: { 'text/event-stream': expect.anything() },
    });
  });

  it('shows bearer auth as a security scheme, with the scope each route needs', () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.paths['/api/health']!.get!.security).toEqual([]);
    expect(doc.paths['/api/sql']!.post!.security).toEqual([{ bearerAuth: ['read'] }]);
    expect(doc.paths['/api/policies']!.put!.security).toEqual([{ bearerAuth: ['operate'] }]);
    expect(doc.paths['/api/retention/run']!.post!.security).toEqual([{ bearerAuth: ['admin'] }]);
    expect(doc.paths['/v1/metrics']!.post!.security).toEqual([{ bearerAuth: ['ingest'] }]);
  });

  it('serves the browsable page at /api/docs from the package itself (no CDN)', async () => {
    const response = await fetch(`${g.url}${DOCS_PREFIX}/`);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('swagger-ui');
    expect(html).not.toMatch(/https?:\/\/(?!localhost)[a-z0-9.-]+\/[^"']*\.(js|css)/i);
  });
});
