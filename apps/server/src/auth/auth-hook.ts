import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GovernorError } from '../errors.ts';
import { normalizePath, requiredScope } from './required-scope.ts';
import { type Scope, hasScope } from './scopes.ts';
import type { RegisteredToken, TokenRegistry } from './token-registry.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated token (name and scopes), or null for open routes and auth off. */
    principal: RegisteredToken | null;
  }
}

const STRENGTH: Record<Scope, number> = { ingest: 1, read: 1, operate: 2, admin: 3 };

/** The stricter of two requirements; null is open. */
function stricter(a: Scope | null, b: Scope | null): Scope | null {
  if (a === null) return b;
  if (b === null) return a;
  return STRENGTH[b] > STRENGTH[a] ? b : a;
}

/** Paths of EventSource streams: browsers cannot set headers there, so `?access_token=` is accepted. */
const QUERY_TOKEN_PATHS = new Set(['/api/events']);

/**
 * Adds the root onRequest hook that enforces `Authorization: Bearer` on every route. Register it
 * before the route plugins so every encapsulated context inherits it.
 */
export function registerAuthHook(app: FastifyInstance, registry: TokenRegistry): void {
  app.decorateRequest('principal', null);
  if (!registry.enabled) return;
  app.addHook('onRequest', async (request, reply) => {
    const pattern = request.routeOptions.url;
    const byPath = requiredScope(request.method, request.url);
    // The console's catch-all pattern says nothing about the path it caught.
    const byRoute = pattern && pattern !== '/*' ? requiredScope(request.method, pattern) : null;
    const needed = stricter(byPath, byRoute);
    if (needed === null) return;

    const presented = presentedToken(request);
    const what = `${request.method} ${pattern && pattern !== '/*' ? pattern : normalizePath(request.url)}`;
    if (presented === null) {
      reply.header('WWW-Authenticate', 'Bearer realm="governor"');
      throw new GovernorError(
        'GOV_ERR_AUTH_MISSING_TOKEN',
        `${what} needs a token with scope "${needed}": send the header Authorization: Bearer <token>`,
      );
    }
    const principal = presented === MALFORMED ? null : registry.authenticate(presented);
    if (principal === null) {
      reply.header('WWW-Authenticate', 'Bearer realm="governor", error="invalid_token"');
      request.log.warn({ route: what }, 'request with an unknown bearer token refused');
      throw new GovernorError(
        'GOV_ERR_AUTH_INVALID_TOKEN',
        'the bearer token is not one Governor knows; check for a typo or ask an admin for a token (see docs/security.md)',
      );
    }
    if (!hasScope(principal.scopes, needed)) {
      reply.header(
        'WWW-Authenticate',
        `Bearer realm="governor", error="insufficient_scope", scope="${needed}"`,
      );
      request.log.warn(
        { route: what, token: principal.name, needed },
        'request without the needed scope refused',
      );
      throw new GovernorError(
        'GOV_ERR_AUTH_MISSING_SCOPE',
        `${what} needs scope "${needed}"; token "${principal.name}" has ${principal.scopes.map((s) => `"${s}"`).join(', ')}. Use a token with "${needed}" (or "admin")`,
      );
    }
    request.principal = principal;
  });
}

const MALFORMED = Symbol('malformed Authorization header');

function presentedToken(request: FastifyRequest): string | typeof MALFORMED | null {
  const header = request.headers.authorization;
  if (typeof header === 'string' && header.trim() !== '') {
    // A header that is there but not `Bearer <one token>` (e.g. `Bearer <token> x`) is a wrong
    // token, not a missing one.
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    return match ? match[1]! : MALFORMED;
  }
  if (request.method === 'GET' && QUERY_TOKEN_PATHS.has(normalizePath(request.url))) {
    const token = (request.query as Record<string, unknown> | undefined)?.access_token;
    if (typeof token === 'string' && token !== '') return token;
  }
  return null;
}
