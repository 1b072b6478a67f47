import type { ActuatorConfig, ControlAction, PoolConfig } from '@governor/conventions';
import { classifyHttpResponse, type DeliveryResult } from '@governor/delivery';
import {
  ApiException,
  CustomObjectsApi,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { createMemoryRollbackStore, type RollbackStore } from '../../state/rollback-store.ts';
import type { Actuator } from '../actuator.ts';

// Carries ControlActions out on a cluster through the official client (@kubernetes/client-node):
//   scale                       → the /scale subresource of the pool's workload (GET, then PATCH)
//   shift_traffic, circuit_break → the backendRef weights of one Gateway API HTTPRoute; a pool is the
//                                  backendRef naming its Service, or, on an llm-d / Gateway API
//                                  Inference Extension fleet, its InferencePool (pools[].kubernetes.inference_pool)
// Every change is a JSON merge patch sent first with dryRun=All (admission and schema run, nothing is
// stored) and then for real, with fieldValidation=Strict so a misspelt field is an error instead of
// being pruned silently, and with the resourceVersion read by the GET so a concurrent writer makes it
// fail with 409 rather than being overwritten. 409, 403, 404 and 422 are failed actions carrying the
// API's message; only 429/5xx and network errors are retried by the delivery queue.
// What was in effect before an apply is kept in the rollback store (DuckDB in a running Governor)
// before the real patch is sent, so the recommendation's rollback restores exactly that value — not
// Governor's belief of it — even after a restart.
//
// Why the HTTPRoute and not a GIE object: in the Gateway API Inference Extension
// (kubernetes-sigs/gateway-api-inference-extension v1.6.0) traffic for a model is split across pools
// by an HTTPRoute whose backendRefs are InferencePools (group inference.networking.k8s.io, kind
// InferencePool) with weights — conformance/tests/gateway_weighted_two_pools.yaml, and
// site-src/api-types/inferencepool.md: "an HTTPRoute may reference multiple InferencePools as
// backendRefs". The per-model weights GIE had (v1alpha2 InferenceModel.spec.targetModels[].weight
// up to v0.5.1, then InferenceModelRewrite.spec.rules[].targets[].weight, removed in v1.6.0 by
// #2973) split a model name across model names (LoRA adapters, rewrites) inside one pool, not across
// pools, so they are not the object for shift_traffic. The InferencePool itself carries no weight; before a pool is
// given more traffic the actuator reads it (GET, v1) and refuses when it is missing or a gateway
// reports it not Accepted or its refs not Resolved (status.parents[].conditions): a backendRef to
// such a pool answers its share of requests with errors.

/** HTTPRoute weights are integers (0…1,000,000); a share of 1 becomes this. */
export const ROUTE_WEIGHT_SCALE = 1000;
const FIELD_MANAGER = 'governor';
const HTTPROUTE = { group: 'gateway.networking.k8s.io', version: 'v1', plural: 'httproutes' } as const;
/** GIE's InferencePool, GA (v1) since GIE v1.0.0; v1.6.0 ships only this group for it. */
export const INFERENCE_POOL = {
  group: 'inference.networking.k8s.io',
  version: 'v1',
  plural: 'inferencepools',
  kind: 'InferencePool',
} as const;
/** InferencePool status conditions that, when False on any parent gateway, mean traffic sent there fails. */
const POOL_READY_CONDITIONS = ['Accepted', 'ResolvedRefs'];

export interface KubernetesActuatorOptions {
  config: ActuatorConfig;
  pools: readonly PoolConfig[];
  /** Credentials: `loadFromDefault()` (KUBECONFIG, ~/.kube/config, else the pod's service account). */
  kubeConfig: KubeConfig;
  /** Where the value in effect before an apply is kept for its rollback; unset, in memory only. */
  rollbackStore?: RollbackStore;
  now?: () => number;
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
  group?: string;
  kind?: string;
  namespace?: string;
  weight?: number;
  [key: string]: unknown;
}
interface HttpRoute {
  metadata: { resourceVersion?: string };
  spec: { rules?: { backendRefs?: BackendRef[]; [key: string]: unknown }[]; [key: string]: unknown };
}
interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}
interface InferencePool {
  status?: { parents?: { parentRef?: { name?: string }; conditions?: Condition[] }[] };
}

/** What a rollback restores: replicas of a /scale, or weights by backendRef key (see backendKey). */
interface PreviousValue {
  replicas?: number;
  weights?: Record<string, number>;
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

/**
 * A backendRef's identity on the route: `Service/<name>` (the default group and kind),
 * `InferencePool/<name>` (GIE v1), else `<kind>.<group>/<name>`, which no pool claims.
 */
export function backendKey(ref: Pick<BackendRef, 'name' | 'group' | 'kind'>): string {
  const group = ref.group ?? '';
  const kind = ref.kind ?? 'Service';
  if (group === '' && kind === 'Service') return `Service/${ref.name}`;
  if (group === INFERENCE_POOL.group && kind === INFERENCE_POOL.kind) return `InferencePool/${ref.name}`;
  return `${kind}.${group}/${ref.name}`;
}

/** The backendRef that carries a pool's traffic: its InferencePool if configured, else its Service. */
export function poolBackendKey(pool: PoolConfig): string {
  const k = pool.kubernetes;
  if (k?.inference_pool) return `InferencePool/${k.inference_pool}`;
  return `Service/${k?.service ?? k?.name ?? pool.name}`;
}

const apiPath = (g: { group: string; version: string; plural: string }, namespace: string, name: string) =>
  `${g.group ? `/apis/${g.group}` : '/api'}/${g.version}/namespaces/${namespace}/${g.plural}/${name}`;

export function createKubernetesActuator(options: KubernetesActuatorOptions): Actuator {
  const { config } = options;
  const api = options.kubeConfig.makeApiClient(CustomObjectsApi);
  const pools = new Map(options.pools.map((p) => [p.name, p]));
  const rollbackStore = options.rollbackStore ?? createMemoryRollbackStore();
  const now = options.now ?? Date.now;
  const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

  const poolOf = (action: ControlAction): PoolConfig => {
    const name = action.target.pool;
    const pool = name ? pools.get(name) : undefined;
    if (!pool) throw new ActionRejected(`pool ${name ?? '(none)'} is not configured under pools:`);
    return pool;
  };

  /**
   * What a rollback restores. Every apply that passed its dry run kept a value before patching, so
   * without one the apply never changed the cluster: there is nothing to undo, and writing the
   * rollback's own value (Governor's belief) could move a workload Governor never touched.
   */
  async function recalled(action: ControlAction, object: string): Promise<PreviousValue | null> {
    if (action.type !== 'rollback') return null;
    const entry = await rollbackStore.recall(config.name, action.recommendationId);
    if (!entry)
      throw new ActionRejected(
        `nothing to roll back on ${object}: the apply of recommendation ${action.recommendationId} never reached it`,
      );
    return entry.value as PreviousValue;
  }

  /** Kept before the real patch: once the cluster has changed, the rollback must be able to undo it. */
  async function remember(action: ControlAction, object: string, value: PreviousValue): Promise<void> {
    if (action.type !== 'apply') return;
    try {
      await rollbackStore.remember({
        actuator: config.name,
        recommendationId: action.recommendationId,
        actionId: action.id,
        object,
        value: { ...value },
        recordedAtMs: now(),
      });
    } catch (error) {
      throw new ActionRejected(
        `could not keep the value in effect on ${object} for a rollback, so nothing was changed: ${(error as Error).message}`,
      );
    }
  }

  async function scale(action: ControlAction & { kind: 'scale' }): Promise<void> {
    const pool = poolOf(action);
    const workload = workloadOf(pool);
    if (!workload) throw new ActionRejected(`pool ${pool.name} has no kubernetes: {kind, name, namespace}`);
    const object = `${apiPath(workload, workload.namespace, workload.name)}/scale`;
    const replicas = (await recalled(action, object))?.replicas ?? action.action.to;
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
    const patch = (dryRun?: 'All') =>
      api.patchNamespacedCustomObjectScale(
        {
          ...workload,
          body,
          fieldManager: FIELD_MANAGER,
          fieldValidation: 'Strict',
          ...(dryRun ? { dryRun } : {}),
        },
        mergePatch,
      );
    await patch('All');
    await remember(action, object, { replicas: current.spec?.replicas ?? 0 });
    await patch();
  }

  async function reweigh(action: ControlAction & { kind: 'shift_traffic' | 'circuit_break' }): Promise<void> {
    const route = config.traffic?.httproute;
    if (!route)
      throw new ActionRejected(
        `actuator ${config.name} has no traffic.httproute to carry ${action.kind} out on`,
      );
    const ref = { ...HTTPROUTE, name: route.name, namespace: route.namespace };
    const object = apiPath(HTTPROUTE, route.namespace, route.name);
    const restore = await recalled(action, object);
    const current = (await api.getNamespacedCustomObject(ref)) as HttpRoute;
    const rules = current.spec.rules ?? [];
    const before: Record<string, number> = {};
    const refs = new Map<string, BackendRef>();
    for (const rule of rules)
      for (const b of rule.backendRefs ?? []) {
        before[backendKey(b)] = b.weight ?? 1;
        refs.set(backendKey(b), b);
      }
    const target = restore?.weights ?? targetWeights(action, before);
    const named = Object.keys(target);
    const missing = named.filter((key) => !(key in before));
    if (named.length === 0 || missing.length === named.length)
      throw new ActionRejected(
        `HTTPRoute ${route.namespace}/${route.name} has no backendRef ${named.join(', ') || '(nothing)'}`,
      );
    for (const key of named) {
      const b = refs.get(key);
      if (b && key.startsWith('InferencePool/') && (target[key] ?? 0) > (before[key] ?? 0))
        await checkInferencePool(b.name, b.namespace ?? route.namespace);
    }
    // A merge patch replaces a list whole, so the rules go back as read with only weights changed; the
    // resourceVersion precondition makes a concurrent edit a 409 instead of a lost update.
    const body = {
      metadata: { resourceVersion: current.metadata.resourceVersion },
      spec: {
        rules: rules.map((rule) => ({
          ...rule,
          backendRefs: (rule.backendRefs ?? []).map((b) =>
            backendKey(b) in target ? { ...b, weight: target[backendKey(b)] } : b,
          ),
        })),
      },
    };
    const patch = (dryRun?: 'All') =>
      api.patchNamespacedCustomObject(
        {
          ...ref,
          body,
          fieldManager: FIELD_MANAGER,
          fieldValidation: 'Strict',
          ...(dryRun ? { dryRun } : {}),
        },
        mergePatch,
      );
    await patch('All');
    // Only the weights this action changes: a rollback must not undo someone else's edit of the others.
    const changed = Object.fromEntries(named.filter((k) => k in before).map((k) => [k, before[k]!]));
    await remember(action, object, { weights: changed });
    await patch();
  }

  async function checkInferencePool(name: string, namespace: string): Promise<void> {
    const pool = (await api.getNamespacedCustomObject({
      ...INFERENCE_POOL,
      namespace,
      name,
    })) as InferencePool;
    for (const parent of pool.status?.parents ?? [])
      for (const c of parent.conditions ?? [])
        if (POOL_READY_CONDITIONS.includes(c.type) && c.status === 'False')
          throw new ActionRejected(
            `InferencePool ${namespace}/${name} is not ready on ${parent.parentRef?.name ?? 'its gateway'} (${c.type} False, ${c.reason ?? 'no reason'}: ${c.message ?? ''}); not sending it more traffic`,
          );
  }

  /** backendRef key → integer weight for the backendRefs the action changes. */
  function targetWeights(
    action: ControlAction & { kind: 'shift_traffic' | 'circuit_break' },
    before: Record<string, number>,
  ): Record<string, number> {
    if (action.kind === 'shift_traffic') {
      const weights = action.action.weights;
      return Object.fromEntries(
        Object.entries(weights).map(([pool, share]) => {
          const config = pools.get(pool);
          return [
            config ? poolBackendKey(config) : `Service/${pool}`,
            Math.round(share * ROUTE_WEIGHT_SCALE),
          ];
        }),
      );
    }
    const key = poolBackendKey(poolOf(action));
    if (action.action.open) return { [key]: 0 };
    // Closing a circuit without a remembered weight: an equal share with the route's other backends.
    const others = Object.entries(before).filter(([name, w]) => name !== key && w > 0);
    const equal =
      others.length > 0
        ? Math.round(others.reduce((s, [, w]) => s + w, 0) / others.length)
        : ROUTE_WEIGHT_SCALE;
    return { [key]: equal };
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
