import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { createJsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { requiredScope } from '../auth/required-scope.ts';

// The API reference, generated from the routes' own zod schemas: OpenAPI 3.1 at
// /api/openapi.json and a browsable page at /api/docs (Swagger UI served from the package, so it
// works offline). Call before the route plugins: @fastify/swagger collects routes as they are added.

export const DOCS_PREFIX = '/api/docs';
export const OPENAPI_PATH = '/api/openapi.json';

const zodTransform = createJsonSchemaTransform({});

type TransformInput = Parameters<typeof zodTransform>[0];

/**
 * Routes whose bodies are not JSON (OTLP protobuf) describe them as plain OpenAPI under this
 * schema key; Fastify neither validates nor serializes it, the reference shows it as given.
 */
export const RAW_OPENAPI = 'x-openapi';

export interface RawOpenApi {
  body?: Record<string, unknown>;
  response?: Record<string, unknown>;
}

/** Adds the bearer scope the route needs (auth/required-scope.ts) to each operation. */
const transform = (input: TransformInput) => {
  const { schema, url } = input;
  const method = String(Array.isArray(input.route.method) ? input.route.method[0] : input.route.method);
  const out = zodTransform(input) as { schema: Record<string, unknown>; url: string };
  if (!schema || out.schema.hide) return out;
  const raw = out.schema[RAW_OPENAPI] as RawOpenApi | undefined;
  if (raw) {
    delete out.schema[RAW_OPENAPI];
    if (raw.body) out.schema.body = raw.body;
    if (raw.response) out.schema.response = raw.response;
  }
  const scope = requiredScope(method, url);
  const note = scope === null ? 'Open: no token needed.' : `Needs a bearer token with scope \`${scope}\`.`;
  out.schema.security = scope === null ? [] : [{ bearerAuth: [scope] }];
  out.schema.description = [schema.description, note].filter(Boolean).join('\n\n');
  return out;
};

export interface RegisteredRoute {
  method: string;
  url: string;
  schema: Record<string, unknown> | undefined;
}

const registered = new WeakMap<FastifyInstance, RegisteredRoute[]>();

/** Every route added after registerApiReference, for the test that each one has a schema. */
export function registeredRoutes(app: FastifyInstance): readonly RegisteredRoute[] {
  return registered.get(app) ?? [];
}

/** Registers on the root instance itself (not encapsulated) so the route collector sees every plugin's routes. */
export async function registerApiReference(app: FastifyInstance): Promise<void> {
  const routes: RegisteredRoute[] = [];
  registered.set(app, routes);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      routes.push({ method, url: route.url, schema: route.schema as Record<string, unknown> | undefined });
    }
  });
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Governor API',
        version: '0.1.0',
        description:
          'Observability and control loop for LLM inference fleets. Concepts (event time, the watermark, windows, the recommendation lifecycle, SSE events, error codes): docs/api.md in the repository.',
      },
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description:
              'API token from the config (auth.tokens) or GOVERNOR_ADMIN_TOKEN. Scopes: ingest, read, operate (includes read), admin (everything). Off when no token is configured.',
          },
        },
      },
      tags: [
        { name: 'ingest', description: 'OTLP/HTTP receiver' },
        { name: 'signals', description: 'The four signals' },
        { name: 'traces', description: 'Requests, traces and tasks' },
        { name: 'control', description: 'Recommendations, actions and policies' },
        { name: 'alerts', description: 'Alerts, deliveries and receivers' },
        { name: 'system', description: 'Health, metrics, storage, SQL, dashboards, events' },
      ],
    },
    transform,
    transformObject: jsonSchemaTransformObject,
  });
  await app.register(fastifySwaggerUi, {
    routePrefix: DOCS_PREFIX,
    // validatorUrl null: the page must not call validator.swagger.io (offline, and no data leaves).
    uiConfig: { validatorUrl: null, docExpansion: 'list', deepLinking: true },
    staticCSP: true,
  });
  app.get(
    OPENAPI_PATH,
    { schema: { summary: 'This API reference as OpenAPI 3.1', tags: ['system'], hide: true } },
    async () => app.swagger(),
  );
}
