import type { Scope } from './scopes.ts';

// Route → scope map of issue #8 (docs/security.md has the table). `null` means open.
// Classification is by the matched route pattern when there is a specific one, else by the
// percent-decoded path, so `/%61pi/sql` cannot slip past as a console file.

const OPERATE_ROUTES: readonly [method: string, pattern: RegExp][] = [
  ['POST', /^\/api\/recommendations\/[^/]+\/(approve|reject|apply)$/],
  ['POST', /^\/api\/control\/evaluate$/],
  ['PUT', /^\/api\/policies$/],
  ['POST', /^\/api\/receivers\/[^/]+\/test$/],
];

const OPEN_API_PATHS = new Set(['/api/health', '/api/ready']);

export function requiredScope(method: string, path: string): Scope | null {
  const m = method === 'HEAD' ? 'GET' : method;
  const p = normalizePath(path);
  if (OPEN_API_PATHS.has(p)) return null;
  if (p === '/v1' || p.startsWith('/v1/')) return 'ingest';
  if (p === '/metrics' || p.startsWith('/metrics/')) return 'read';
  if (p === '/api' || p.startsWith('/api/')) {
    if (m === 'GET') return 'read';
    if (m === 'POST' && p === '/api/sql') return 'read';
    // A preview of policies changes nothing; whoever may read recommendations may ask it.
    if (m === 'POST' && p === '/api/policies/preview') return 'read';
    if (OPERATE_ROUTES.some(([rm, re]) => rm === m && re.test(p))) return 'operate';
    // Every other change through the API (retention runs, future endpoints) needs admin.
    return 'admin';
  }
  // The console's static files: the page loads without a token and asks for one.
  return null;
}

/** Strips the query, percent-decodes, collapses repeated slashes and drops a trailing slash. */
export function normalizePath(url: string): string {
  let path = url.split('?')[0] ?? '/';
  try {
    path = decodeURIComponent(path);
  } catch {
    // Malformed escapes: classify the raw text; the router answers 400/404 for it anyway.
  }
  path = path.replace(/\/{2,}/g, '/').toLowerCase();
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}
