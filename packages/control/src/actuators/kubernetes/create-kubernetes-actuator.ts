import type { ActuatorConfig, ControlAction, PoolConfig } from '@governor/conventions';
import { classifyHttpResponse, type DeliveryResult } from '@governor/delivery';
import {
  ApiException,
  CustomObjectsApi,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import type { Actuator } from '../actuator.ts';

// Carries ControlActions out on a cluster through the official client (@kubernetes/client-node):
//   scale                       → the /scale subresource of the pool's workload (GET, then PATCH)
//   shift_traffic, circuit_break → the backendRef weights of one Gateway API HTTPRoute
// Every change is a JSON merge patch sent first with dryRun=All (admission and schema run, nothing is
// stored) and then for real, with fieldValidation=Strict so a misspelt field is an error instead of
// being pruned silently, and with the resourceVersion read by the GET so a concurrent writer makes it
// fail with 409 rather than being overwritten. 409, 403, 404 and 422 are failed actions carrying the
// API's message; only 429/5xx and network errors are retried by the delivery queue.
// What was in effect before an apply is remembered per recommendation, so its rollback restores
// exactly that value, not Governor's belief of it.

/** HTTPRoute weights are integers (0…1,000,000); a share of 1 becomes this. */
export const ROUTE_WEIGHT_SCALE = 1000;
const FIELD_MANAGER = 'governor';
const HTTPROUTE = { group: 'gateway.networking.k8s.io', version: 'v1', plural: 'httproutes' } as const;

export interface KubernetesActuatorOptions {
  config: ActuatorConfig;
  pools: readonly PoolConfig[];
  /** Credentials: `loadFromDefault()` (KUBECONFIG, ~/.kube/config, else the pod's service account). */
  kubeConfig: KubeConfig;
}

interface Workload {
  group: string;
  version: string;
  plural: string;
  name: string;
  namespace: string;
}

interface BackendRef {
  name: string;
  weight?: number;
  [key: string]: unknown;
}
interface HttpRoute {
  metadata: { resourceVersion?: string };
  spec: { rules?: { backendRefs?: BackendRef[]; [key: string]: unknown }[]; [key: string]: unknown };
}

class ActionRejected extends Error {}

export function workloadOf(pool: PoolConfig): Workload | null {
  const k = pool.kubernetes;
  if (!k) return null;
  const [group, version] = (k.api_version ?? 'apps/v1').includes('/')
    ? (k.api_version ?? 'apps/v1').split('/', 2)
    : ['', k.api_version ?? 'v1'];
  return {
    group: group ?? '',
    version: version ?? 'v1',
    plural: k.resource ?? `${k.kind.toLowerCase()}s`,
    name: k.name,
    namespace: k.namespace,
  };
}

export function createKubernetesActuator(options: KubernetesActuatorOptions): Actuator {
  const { config } = options;
  const api = options.kubeConfig.makeApiClient(CustomObjectsApi);
  const pools = new Map(options.pools.map((p) => [p.name, p]));
  const previous = new Map<string, { replicas?: number; weights?: Record<string, number> }>();
  const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

  const poolOf = (action: ControlAction): PoolConfig => {
    const name = action.target.pool;
    const pool = name ? pools.get(name) : undefined;
    if (!pool) throw new ActionRejected(`pool ${name ?? '(none)'} is not configured under pools:`);
    return pool;
  };
  const serviceOf = (pool: PoolConfig): string =>
    pool.kubernetes?.service ?? pool.kubernetes?.name ?? pool.name;

  async function scale(action: ControlAction): Promise<void> {
    const pool = poolOf(action);
    const workload = workloadOf(pool);
    if (!workload) throw new ActionRejected(`pool ${pool.name} has no kubernetes: {kind, name, namespace}`);
    const remembered =
      action.type === 'rollback' ? previous.get(action.recommendationId)?.replicas : undefined;
    const replicas = remembered ?? Number(action.action.to);
    if (!Number.isInteger(replicas) || replicas < 0)
      throw new ActionRejected(`scale to ${String(action.action.to)} is not a replica count`);
    const current = (await api.getNamespacedCustomObjectScale(workload)) as {
      metadata?: { resourceVersion?: string };
      spec?: { replicas?: number };
    };
    const body = {
      metadata: { resourceVersion: current.metadata?.resourceVersion },
      spec: { replicas },
    };
    for (const dryRun of ['All', undefined])
      await api.patchNamespacedCustomObjectScale(
        {
          ...workload,
          body,
          fieldManager: FIELD_MANAGER,
          fieldValidation: 'Strict',
          ...(dryRun ? { dryRun } : {}),
        },
        mergePatch,
      );
    if (action.type === 'apply')
      previous.set(action.recommendationId, { replicas: current.spec?.replicas ?? 0 });
  }

  async function reweigh(action: ControlAction): Promise<void> {
    const route = config.traffic?.httproute;
    if (!route)
      throw new ActionRejected(
        `actuator ${config.name} has no traffic.httproute to carry ${action.kind} out on`,
      );
    const ref = { ...HTTPROUTE, name: route.name, namespace: route.namespace };
    const current = (await api.getNamespacedCustomObject(ref)) as HttpRoute;
    const rules = current.spec.rules ?? [];
    const before: Record<string, number> = {};
    for (const rule of rules) for (const b of rule.backendRefs ?? []) before[b.name] = b.weight ?? 1;
    const target = targetWeights(action, before);
    const named = Object.keys(target);
    if (named.length === 0 || !named.some((service) => service in before))
      throw new ActionRejected(
        `HTTPRoute ${route.namespace}/${route.name} has no backendRef named ${named.join(', ') || '(nothing)'}`,
      );
    // A merge patch replaces a list whole, so the rules go back as read with only weights changed; the
    // resourceVersion precondition makes a concurrent edit a 409 instead of a lost update.
    const body = {
      metadata: { resourceVersion: current.metadata.resourceVersion },
      spec: {
        rules: rules.map((rule) => ({
          ...rule,
          backendRefs: (rule.backendRefs ?? []).map((b) =>
            b.name in target ? { ...b, weight: target[b.name] } : b,
          ),
        })),
      },
    };
    for (const dryRun of ['All', undefined])
      await api.patchNamespacedCustomObject(
        {
          ...ref,
          body,
          fieldManager: FIELD_MANAGER,
          fieldValidation: 'Strict',
          ...(dryRun ? { dryRun } : {}),
        },
        mergePatch,
      );
    if (action.type === 'apply') previous.set(action.recommendationId, { weights: before });
  }

  /** Service → integer weight for the backendRefs the action changes. */
  function targetWeights(action: ControlAction, before: Record<string, number>): Record<string, number> {
    const remembered =
      action.type === 'rollback' ? previous.get(action.recommendationId)?.weights : undefined;
    if (remembered) return remembered;
    if (action.kind === 'shift_traffic') {
      const weights = (action.action.weights ?? {}) as Record<string, number>;
      return Object.fromEntries(
        Object.entries(weights).map(([pool, share]) => {
          const config = pools.get(pool);
          return [config ? serviceOf(config) : pool, Math.round(share * ROUTE_WEIGHT_SCALE)];
        }),
      );
    }
    const pool = poolOf(action);
    const service = serviceOf(pool);
    if (action.action.open === true) return { [service]: 0 };
    // Closing a circuit without a remembered weight: an equal share with the route's other backends.
    const others = Object.entries(before).filter(([name, w]) => name !== service && w > 0);
    const equal =
      others.length > 0
        ? Math.round(others.reduce((s, [, w]) => s + w, 0) / others.length)
        : ROUTE_WEIGHT_SCALE;
    return { [service]: equal };
  }

  return {
    name: config.name,
    type: config.type,
    async deliver(action: ControlAction): Promise<DeliveryResult> {
      try {
        if (action.kind === 'scale') await scale(action);
        else if (action.kind === 'shift_traffic' || action.kind === 'circuit_break') await reweigh(action);
        else
          return {
            status: 'failed',
            httpStatus: null,
            error: `the kubernetes actuator does not carry out ${action.kind}; route it to a webhook actuator`,
          };
        return { status: 'delivered', httpStatus: 200 };
      } catch (error) {
        return toDeliveryResult(error);
      }
    },
  };
}

/** The API's own message (a meta/v1 Status body) for failures; only 429/5xx and network errors retry. */
function toDeliveryResult(error: unknown): DeliveryResult {
  if (error instanceof ActionRejected) return { status: 'failed', httpStatus: null, error: error.message };
  if (error instanceof ApiException) {
    const body = typeof error.body === 'string' ? error.body : JSON.stringify(error.body ?? '');
    let message = body;
    try {
      message = (JSON.parse(body) as { message?: string }).message ?? body;
    } catch {
      // not a Status object; keep the raw body
    }
    const retryAfter = (error.headers as Record<string, string> | undefined)?.['retry-after'] ?? null;
    const result = classifyHttpResponse(error.code, retryAfter, message, Date.now());
    return result.status === 'delivered'
      ? { status: 'failed', httpStatus: error.code, error: message }
      : result;
  }
  const cause = (error as { cause?: { code?: string } }).cause;
  return {
    status: 'retryable',
    afterMs: null,
    httpStatus: null,
    error: `Kubernetes API unreachable: ${cause?.code ?? (error as Error).message}`,
  };
}
