import type { FastifyInstance } from 'fastify';

// Request counts and latency per route for /metrics. Routes are the registered patterns
// (`/api/recommendations/:id/approve`), never raw URLs, so label cardinality stays bounded.

const BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface RouteStats {
  method: string;
  route: string;
  byStatus: Map<string, number>;
  buckets: number[];
  sumS: number;
  count: number;
}

export interface HttpMetrics {
  snapshot(): readonly Readonly<RouteStats>[];
  readonly bucketsS: readonly number[];
}

export function registerHttpMetrics(app: FastifyInstance): HttpMetrics {
  const routes = new Map<string, RouteStats>();
  app.addHook('onResponse', async (request, reply) => {
    // Unmatched URLs (404s, scans) share one series.
    const route = request.routeOptions.url ?? 'unmatched';
    const key = `${request.method} ${route}`;
    let stats = routes.get(key);
    if (!stats) {
      stats = {
        method: request.method,
        route,
        byStatus: new Map(),
        buckets: BUCKETS_S.map(() => 0),
        sumS: 0,
        count: 0,
      };
      routes.set(key, stats);
    }
    const status = String(reply.statusCode);
    stats.byStatus.set(status, (stats.byStatus.get(status) ?? 0) + 1);
    const seconds = reply.elapsedTime / 1000;
    stats.sumS += seconds;
    stats.count++;
    for (let i = 0; i < BUCKETS_S.length; i++) if (seconds <= BUCKETS_S[i]!) stats.buckets[i]!++;
  });
  return { snapshot: () => [...routes.values()], bucketsS: BUCKETS_S };
}
