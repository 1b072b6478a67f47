import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv } from 'ajv';

// A test stand-in for the Kubernetes API server: the endpoints the kubernetes actuator uses — the
// scale subresource, Gateway API HTTPRoutes and the Gateway API Inference Extension's InferencePools
// (GET and PATCH on each) — with merge-patch semantics, dryRun=All, resourceVersion preconditions
// (409) and fieldValidation=Strict. The objects a test starts with and every PATCH result are
// validated against the OpenAPI schema of their resource (fixtures/kubernetes-schemas.json, sources
// and versions noted inside: the Kubernetes openapi-spec, the Gateway API and GIE CRDs); an invalid
// result is answered 422 like the real server. Objects and every request are kept for the test to
// inspect.

const schemas = JSON.parse(
  readFileSync(new URL('./fixtures/kubernetes-schemas.json', import.meta.url), 'utf8'),
) as {
  $defs: Record<string, unknown>;
};

/** fieldValidation=Strict: an object schema with properties accepts no other field. */
function strict(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strict);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) out[k] = strict(v);
  if (out.properties && out.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}

const ajv = new Ajv({ strict: false, allErrors: true });
ajv.addFormat('int32', {
  type: 'number',
  validate: (n: number) => Number.isInteger(n) && Math.abs(n) < 2 ** 31,
});
ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
ajv.addFormat('date-time', (s: string) => !Number.isNaN(Date.parse(s)));
ajv.addSchema({ $id: 'k8s', $defs: strict(schemas.$defs) });
const validateScale = ajv.getSchema('k8s#/$defs/io.k8s.api.autoscaling.v1.Scale')!;
const validateRoute = ajv.getSchema('k8s#/$defs/HTTPRoute')!;
const validateInferencePool = ajv.getSchema('k8s#/$defs/InferencePool')!;

export type KubernetesKind = 'Scale' | 'HTTPRoute' | 'InferencePool';

/** The resource an API path names, by the path's shape. */
function kindOf(path: string): KubernetesKind | null {
  if (path.endsWith('/scale')) return 'Scale';
  if (path.includes('/httproutes/')) return 'HTTPRoute';
  if (path.includes('/inferencepools/')) return 'InferencePool';
  return null;
}

/**
 * The schema, plus the one CEL rule of the HTTPRoute CRD that matters here (ajv does not run CEL):
 * a backendRef to a Service (empty group, kind Service — both defaults) must name a port; one to an
 * InferencePool need not.
 */
function schemaErrors(kind: KubernetesKind, object: unknown): string | null {
  const validate = { Scale: validateScale, HTTPRoute: validateRoute, InferencePool: validateInferencePool }[
    kind
  ];
  if (!validate(object)) return ajv.errorsText(validate.errors);
  if (kind !== 'HTTPRoute') return null;
  const rules = (object as { spec?: { rules?: { backendRefs?: Record<string, unknown>[] }[] } }).spec?.rules;
  for (const [i, rule] of (rules ?? []).entries())
    for (const [j, ref] of (rule.backendRefs ?? []).entries())
      if ((ref.group ?? '') === '' && (ref.kind ?? 'Service') === 'Service' && ref.port === undefined)
        return `spec.rules[${i}].backendRefs[${j}]: Must have port for Service reference`;
  return null;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  contentType: string | undefined;
  body: unknown;
  status: number;
}

type StoredObject = Record<string, unknown> & {
  metadata: { resourceVersion: string; [key: string]: unknown };
};

function mergePatch(target: unknown, patch: unknown): unknown {
  if (!patch || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    target && typeof target === 'object' && !Array.isArray(target)
      ? { ...(target as Record<string, unknown>) }
      : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

const status = (code: number, reason: string, message: string) => ({
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  message,
  reason,
  code,
});

/** An rbac.authorization.k8s.io/v1 PolicyRule (the fields a Role's rules use). */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
  verbs: string[];
}

/** What RBAC sees of a request: `GET /apis/apps/v1/namespaces/llm/deployments/x/scale` → get apps deployments/scale x. */
export interface ResourceRequest {
  verb: string;
  group: string;
  namespace: string;
  resource: string;
  name: string;
}

export function resourceRequestOf(method: string, path: string): ResourceRequest {
  const parts = path.split('/').filter(Boolean);
  const [group, rest] = parts[0] === 'api' ? ['', parts.slice(2)] : [parts[1] ?? '', parts.slice(3)];
  const [, namespace = '', plural = '', name = '', sub] = rest;
  return {
    verb: method.toLowerCase(),
    group,
    namespace,
    resource: sub ? `${plural}/${sub}` : plural,
    name,
  };
}

export function isAllowedBy(rules: readonly PolicyRule[], r: ResourceRequest): boolean {
  const has = (list: readonly string[] | undefined, value: string) =>
    list !== undefined && (list.includes('*') || list.includes(value));
  return rules.some(
    (rule) =>
      has(rule.apiGroups, r.group) &&
      has(rule.resources, r.resource) &&
      has(rule.verbs, r.verb) &&
      (!rule.resourceNames || rule.resourceNames.length === 0 || rule.resourceNames.includes(r.name)),
  );
}

export interface FakeKubernetesApiOptions {
  /** Enforce this Role for every request, as the API server does for Governor's service account. */
  role?: { rules: readonly PolicyRule[] };
}

export interface FakeKubernetesApi {
  url: string;
  requests: RecordedRequest[];
  objects: Map<string, StoredObject>;
  /** Answers every request to this path with 403 (missing RBAC). */
  forbid(path: string): void;
  /** Someone else writes the object between the actuator's GET and its PATCH. */
  writeConcurrentlyAfterNextGet(path: string): void;
  /** The next real (not dry-run) PATCH of this path is stored, but answered with `code` (a timeout after the write). */
  storeButFailNextPatch(path: string, code: number): void;
  close(): Promise<void>;
}

export async function startFakeKubernetesApi(
  initial: Record<string, StoredObject>,
  options: FakeKubernetesApiOptions = {},
): Promise<FakeKubernetesApi> {
  for (const [path, object] of Object.entries(initial)) {
    const kind = kindOf(path);
    const errors = kind ? schemaErrors(kind, object) : `no schema for ${path}`;
    if (errors) throw new Error(`test object ${path} is not a valid ${kind ?? 'object'}: ${errors}`);
  }
  const objects = new Map(Object.entries(initial).map(([p, o]) => [p, structuredClone(o)]));
  const requests: RecordedRequest[] = [];
  const forbidden = new Set<string>();
  const concurrent = new Set<string>();
  const failAfterStore = new Map<string, number>();
  let version = 100;

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const text = Buffer.concat(chunks).toString('utf8');
      const record: RecordedRequest = {
        method: req.method ?? '',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        contentType: req.headers['content-type'],
        body: text ? JSON.parse(text) : undefined,
        status: 0,
      };
      requests.push(record);
      const reply = (code: number, body: unknown) => {
        record.status = code;
        res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      };
      const asked = resourceRequestOf(req.method ?? '', url.pathname);
      const plural = asked.resource.split('/')[0] ?? '';
      const name = asked.name;
      if (forbidden.has(url.pathname) || (options.role && !isAllowedBy(options.role.rules, asked)))
        return reply(
          403,
          status(
            403,
            'Forbidden',
            // The API server's wording for an RBAC denial.
            `${asked.resource} "${name}" is forbidden: User "system:serviceaccount:llm:governor" cannot ${asked.verb} resource "${asked.resource}" in API group "${asked.group}" in the namespace "${asked.namespace}"`,
          ),
        );
      const stored = objects.get(url.pathname);
      if (!stored) return reply(404, status(404, 'NotFound', `${plural} "${name}" not found`));
      if (req.method === 'GET') {
        reply(200, stored);
        if (concurrent.delete(url.pathname)) stored.metadata.resourceVersion = String(++version);
        return;
      }
      if (req.method !== 'PATCH') return reply(405, status(405, 'MethodNotAllowed', 'method not allowed'));
      if (req.headers['content-type'] !== 'application/merge-patch+json')
        return reply(
          415,
          status(415, 'UnsupportedMediaType', `unsupported patch type ${req.headers['content-type']}`),
        );
      const patch = record.body as { metadata?: { resourceVersion?: string } };
      const wanted = patch.metadata?.resourceVersion;
      if (wanted !== undefined && wanted !== stored.metadata.resourceVersion)
        return reply(
          409,
          status(
            409,
            'Conflict',
            `Operation cannot be fulfilled on ${plural} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
          ),
        );
      const next = mergePatch(stored, patch) as StoredObject;
      const errors = schemaErrors(kindOf(url.pathname)!, next);
      if (errors) return reply(422, status(422, 'Invalid', `${plural} "${name}" is invalid: ${errors}`));
      if (url.searchParams.get('dryRun') === 'All') return reply(200, next);
      next.metadata.resourceVersion = String(++version);
      if (url.pathname.endsWith('/scale'))
        (next as { status?: unknown }).status = (stored as { status?: unknown }).status;
      objects.set(url.pathname, next);
      const failWith = failAfterStore.get(url.pathname);
      if (failWith !== undefined) {
        failAfterStore.delete(url.pathname);
        return reply(
          failWith,
          status(failWith, 'Timeout', 'the request timed out after the object was stored'),
        );
      }
      reply(200, next);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    objects,
    forbid: (path) => forbidden.add(path),
    writeConcurrentlyAfterNextGet: (path) => concurrent.add(path),
    storeButFailNextPatch: (path, code) => failAfterStore.set(path, code),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Validates an object against a fixture schema, for tests that check the fixtures themselves. */
export function isValidKubernetesObject(kind: KubernetesKind, object: unknown): boolean {
  return schemaErrors(kind, object) === null;
}
