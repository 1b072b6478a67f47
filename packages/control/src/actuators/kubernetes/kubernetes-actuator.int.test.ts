import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type ActionByKind,
  ActuatorConfig,
  type ControlAction,
  PoolConfig,
  type RecommendationKind,
} from '@governor/conventions';
import { createStore } from '@governor/store';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, test } from 'vitest';
import { createDuckDbRollbackStore, type RollbackStore } from '../../state/rollback-store.ts';
import { createActuatorsFromConfig } from '../create-actuators-from-config.ts';
import { createDeliveryQueue, type DeliveryOutcome } from '../create-delivery-queue.ts';
import {
  type FakeKubernetesApi,
  isValidKubernetesObject,
  startFakeKubernetesApi,
} from './fake-kubernetes-api.ts';

const SCALE = '/apis/apps/v1/namespaces/llm/deployments/vllm-llama8b-h100/scale';
const ROUTE = '/apis/gateway.networking.k8s.io/v1/namespaces/llm/httproutes/llama8b';

const scaleObject = (replicas: number) => ({
  apiVersion: 'autoscaling/v1',
  kind: 'Scale',
  metadata: { name: 'vllm-llama8b-h100', namespace: 'llm', resourceVersion: '7' },
  spec: { replicas },
  status: { replicas, selector: 'app=vllm-llama8b-h100' },
});
const routeObject = () => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { name: 'llama8b', namespace: 'llm', resourceVersion: '12' },
  spec: {
    parentRefs: [{ name: 'inference-gateway' }],
    rules: [
      {
        matches: [{ path: { type: 'PathPrefix', value: '/v1' } }],
        backendRefs: [
          { name: 'vllm-llama8b-h100', port: 8000, weight: 700 },
          { name: 'vllm-llama8b-a100', port: 8000, weight: 300 },
        ],
      },
    ],
  },
});

const pools = [
  PoolConfig.parse({
    name: 'h100',
    kubernetes: { kind: 'Deployment', name: 'vllm-llama8b-h100', namespace: 'llm' },
  }),
  PoolConfig.parse({
    name: 'a100',
    kubernetes: { kind: 'Deployment', name: 'vllm-llama8b-a100', namespace: 'llm' },
  }),
];

// llm-d / Gateway API Inference Extension: the route splits a model's traffic across InferencePools
// (shape of GIE v1.6.0 conformance/tests/gateway_weighted_two_pools.yaml; pools as in
// site-src/api-types/inferencepool.md).
const POOL_ROUTE = '/apis/gateway.networking.k8s.io/v1/namespaces/llm/httproutes/llama8b-pools';
const inferencePoolPath = (name: string) =>
  `/apis/inference.networking.k8s.io/v1/namespaces/llm/inferencepools/${name}`;
const poolRouteObject = () => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { name: 'llama8b-pools', namespace: 'llm', resourceVersion: '30' },
  spec: {
    parentRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'inference-gateway' }],
    rules: [
      {
        matches: [{ path: { type: 'PathPrefix', value: '/' } }],
        backendRefs: [
          { group: 'inference.networking.k8s.io', kind: 'InferencePool', name: 'llama8b-h100', weight: 700 },
          { group: 'inference.networking.k8s.io', kind: 'InferencePool', name: 'llama8b-a100', weight: 300 },
        ],
      },
    ],
  },
});
const condition = (type: string, status: 'True' | 'False', reason: string, message = '') => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: '2026-01-01T00:00:00Z',
});
const ACCEPTED = [
  condition('Accepted', 'True', 'Accepted'),
  condition('ResolvedRefs', 'True', 'ResolvedRefs'),
];
const inferencePoolObject = (name: string, conditions = ACCEPTED) => ({
  apiVersion: 'inference.networking.k8s.io/v1',
  kind: 'InferencePool',
  metadata: { name, namespace: 'llm', resourceVersion: '40' },
  spec: {
    selector: { matchLabels: { app: `vllm-${name}` } },
    targetPorts: [{ number: 8000 }],
    endpointPickerRef: { name: `${name}-epp`, port: { number: 9002 }, failureMode: 'FailOpen' },
  },
  status: {
    parents: [
      {
        parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'inference-gateway' },
        conditions,
      },
    ],
  },
});
const giePools = [
  PoolConfig.parse({
    name: 'h100',
    kubernetes: {
      kind: 'Deployment',
      name: 'vllm-llama8b-h100',
      namespace: 'llm',
      inference_pool: 'llama8b-h100',
    },
  }),
  PoolConfig.parse({
    name: 'a100',
    kubernetes: {
      kind: 'Deployment',
      name: 'vllm-llama8b-a100',
      namespace: 'llm',
      inference_pool: 'llama8b-a100',
    },
  }),
];
const POOL_TRAFFIC = { traffic: { httproute: { name: 'llama8b-pools', namespace: 'llm' } } };
const poolWeights = () =>
  (
    api.objects.get(POOL_ROUTE) as unknown as ReturnType<typeof poolRouteObject>
  ).spec.rules[0]!.backendRefs.map((b) => [b.name, b.weight]);

let api: FakeKubernetesApi;
const replicasOf = (k8s: FakeKubernetesApi) =>
  (k8s.objects.get(SCALE)!.spec as { replicas: number }).replicas;
afterEach(() => api?.close());

function kubeConfigFor(url: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'test', server: url, skipTLSVerify: true }],
    users: [{ name: 'governor', token: 'test-token' }],
    contexts: [{ name: 'test', cluster: 'test', user: 'governor' }],
    currentContext: 'test',
  });
  return kc;
}

function start(
  extra: Record<string, unknown> = {},
  poolConfigs: readonly PoolConfig[] = pools,
  rollbackStore?: RollbackStore,
) {
  const config = ActuatorConfig.parse({
    name: 'cluster',
    type: 'kubernetes',
    traffic: { httproute: { name: 'llama8b', namespace: 'llm' } },
    backoff_ms: 5,
    ...extra,
  });
  const outcomes: DeliveryOutcome[] = [];
  const queue = createDeliveryQueue({
    actuators: createActuatorsFromConfig(
      [config],
      {},
      poolConfigs,
      () => kubeConfigFor(api.url),
      rollbackStore,
    ),
    onOutcome: (o) => outcomes.push(o),
  });
  return {
    outcomes,
    queue,
    async run(action: ControlAction) {
      const n = outcomes.length;
      queue.enqueue(action);
      await queue.drain(10_000);
      expect(outcomes.length).toBe(n + 1);
      return outcomes[n]!;
    },
  };
}

const action = <K extends RecommendationKind>(
  id: string,
  type: 'apply' | 'rollback',
  kind: K,
  body: ActionByKind[K],
  target = { pool: 'h100' },
) =>
  ({
    id,
    recommendationId: 'rec-1',
    type,
    kind,
    target,
    action: body,
    at: '2026-01-01T00:05:00.000Z',
  }) as Extract<ControlAction, { kind: K }>;

const summary = () =>
  api.requests.map((r) => `${r.method} ${r.path}${r.query.dryRun ? ' dryRun=All' : ''} → ${r.status}`);

describe('kubernetes actuator', () => {
  test('scale: GET, dry-run PATCH, PATCH; the rollback restores the replicas read before, not the ones the action assumed', async () => {
    api = await startFakeKubernetesApi({ [SCALE]: scaleObject(2) });
    const k8s = start();
    // Governor believes 3 (action.from); the cluster runs 2. The rollback must restore 2.
    expect(await k8s.run(action('a1', 'apply', 'scale', { from: 3, to: 5 }))).toMatchObject({
      status: 'delivered',
      attempts: 1,
    });
    expect(replicasOf(api)).toBe(5);
    expect(await k8s.run(action('a2', 'rollback', 'scale', { from: 5, to: 3 }))).toMatchObject({
      status: 'delivered',
    });
    expect(replicasOf(api)).toBe(2);
    expect(summary()).toEqual([
      `GET ${SCALE} → 200`,
      `PATCH ${SCALE} dryRun=All → 200`,
      `PATCH ${SCALE} → 200`,
      `GET ${SCALE} → 200`,
      `PATCH ${SCALE} dryRun=All → 200`,
      `PATCH ${SCALE} → 200`,
    ]);
    const patches = api.requests.filter((r) => r.method === 'PATCH');
    expect(patches.map((r) => r.body)).toEqual([
      { metadata: { resourceVersion: '7' }, spec: { replicas: 5 } },
      { metadata: { resourceVersion: '7' }, spec: { replicas: 5 } },
      { metadata: { resourceVersion: '101' }, spec: { replicas: 2 } },
      { metadata: { resourceVersion: '101' }, spec: { replicas: 2 } },
    ]);
    expect(
      patches.every(
        (r) => r.contentType === 'application/merge-patch+json' && r.query.fieldValidation === 'Strict',
      ),
    ).toBe(true);
    await k8s.queue.close();
  });

  test('shift_traffic and circuit_break change only the backendRef weights; rollback restores them', async () => {
    api = await startFakeKubernetesApi({ [ROUTE]: routeObject() });
    const k8s = start();
    const withoutWeights = (o: unknown) =>
      JSON.parse(JSON.stringify(o, (k, v) => (k === 'weight' || k === 'resourceVersion' ? undefined : v)));
    expect(
      await k8s.run(
        action('s1', 'apply', 'shift_traffic', { weights: { h100: 0.4, a100: 0.6 } }, {
          model: 'llama8b',
        } as never),
      ),
    ).toMatchObject({ status: 'delivered' });
    const shifted = api.objects.get(ROUTE) as unknown as ReturnType<typeof routeObject>;
    expect(shifted.spec.rules[0]!.backendRefs.map((b) => [b.name, b.weight])).toEqual([
      ['vllm-llama8b-h100', 400],
      ['vllm-llama8b-a100', 600],
    ]);
    expect(withoutWeights(shifted)).toEqual(withoutWeights(routeObject()));
    expect(
      await k8s.run(
        action('s2', 'rollback', 'shift_traffic', { weights: { h100: 0.5, a100: 0.5 } }, {
          model: 'llama8b',
        } as never),
      ),
    ).toMatchObject({ status: 'delivered' });
    expect(
      (api.objects.get(ROUTE) as unknown as ReturnType<typeof routeObject>).spec.rules[0]!.backendRefs.map(
        (b) => b.weight,
      ),
    ).toEqual([700, 300]);

    const breaker = { ...action('c1', 'apply', 'circuit_break', { open: true }), recommendationId: 'rec-2' };
    expect(await k8s.run(breaker)).toMatchObject({ status: 'delivered' });
    expect(
      (api.objects.get(ROUTE) as unknown as ReturnType<typeof routeObject>).spec.rules[0]!.backendRefs.map(
        (b) => b.weight,
      ),
    ).toEqual([0, 300]);
    expect(await k8s.run({ ...breaker, id: 'c2', type: 'rollback', action: { open: false } })).toMatchObject({
      status: 'delivered',
    });
    expect(
      (api.objects.get(ROUTE) as unknown as ReturnType<typeof routeObject>).spec.rules[0]!.backendRefs.map(
        (b) => b.weight,
      ),
    ).toEqual([700, 300]);
    expect(api.requests.filter((r) => r.method === 'PATCH').every((r) => r.status === 200)).toBe(true);
    await k8s.queue.close();
  });

  test('409, 403 and 404 end as one failed attempt with the API message, never retried', async () => {
    api = await startFakeKubernetesApi({ [SCALE]: scaleObject(2), [ROUTE]: routeObject() });
    const k8s = start({ max_attempts: 5 });
    api.writeConcurrentlyAfterNextGet(SCALE);
    const conflict = await k8s.run(action('x1', 'apply', 'scale', { from: 2, to: 4 }));
    expect(conflict).toMatchObject({ status: 'failed', attempts: 1, httpStatus: 409 });
    expect(conflict.error).toContain('the object has been modified');
    expect(replicasOf(api)).toBe(2);

    api.forbid(ROUTE);
    const forbidden = await k8s.run(action('x2', 'apply', 'circuit_break', { open: true }));
    expect(forbidden).toMatchObject({ status: 'failed', attempts: 1, httpStatus: 403 });
    expect(forbidden.error).toContain('cannot get resource "httproutes"');

    const missing = await k8s.run({
      ...action('x3', 'apply', 'scale', { from: 1, to: 2 }),
      target: { pool: 'a100' },
    });
    expect(missing).toMatchObject({ status: 'failed', attempts: 1, httpStatus: 404 });
    expect(missing.error).toContain('"vllm-llama8b-a100" not found');
    // The conflicting apply never changed the cluster, so its rollback has nothing to undo: it must
    // not write the rollback's own figure (2 → Governor's belief) onto a workload left alone.
    const undo = await k8s.run(action('x4', 'rollback', 'scale', { from: 4, to: 3 }));
    expect(undo).toMatchObject({ status: 'failed', attempts: 1, httpStatus: null });
    expect(undo.error).toContain(`nothing to roll back on ${SCALE}`);
    expect(replicasOf(api)).toBe(2);
    // No retries: one GET + one dry-run PATCH (409), one GET (403), one GET (404), no request for the rollback.
    expect(summary()).toEqual([
      `GET ${SCALE} → 200`,
      `PATCH ${SCALE} dryRun=All → 409`,
      `GET ${ROUTE} → 403`,
      `GET /apis/apps/v1/namespaces/llm/deployments/vllm-llama8b-a100/scale → 404`,
    ]);
    await k8s.queue.close();
  });

  test('llm-d / GIE: weights move between InferencePool backendRefs; a pool is read before it gets more traffic', async () => {
    api = await startFakeKubernetesApi({
      [POOL_ROUTE]: poolRouteObject(),
      [inferencePoolPath('llama8b-h100')]: inferencePoolObject('llama8b-h100'),
      [inferencePoolPath('llama8b-a100')]: inferencePoolObject('llama8b-a100'),
    });
    const k8s = start(POOL_TRAFFIC, giePools);
    const shift = action('s1', 'apply', 'shift_traffic', { weights: { h100: 0.4, a100: 0.6 } }, {
      model: 'llama8b',
    } as never);
    expect(await k8s.run(shift)).toMatchObject({ status: 'delivered' });
    expect(poolWeights()).toEqual([
      ['llama8b-h100', 400],
      ['llama8b-a100', 600],
    ]);
    // Only the weights changed; the route is still a valid HTTPRoute (InferencePool refs need no port).
    const withoutWeights = (o: unknown) =>
      JSON.parse(JSON.stringify(o, (k, v) => (k === 'weight' || k === 'resourceVersion' ? undefined : v)));
    expect(withoutWeights(api.objects.get(POOL_ROUTE))).toEqual(withoutWeights(poolRouteObject()));
    expect(isValidKubernetesObject('HTTPRoute', api.objects.get(POOL_ROUTE))).toBe(true);

    const breaker = { ...action('c1', 'apply', 'circuit_break', { open: true }), recommendationId: 'rec-2' };
    expect(await k8s.run(breaker)).toMatchObject({ status: 'delivered' });
    expect(poolWeights()).toEqual([
      ['llama8b-h100', 0],
      ['llama8b-a100', 600],
    ]);
    expect(await k8s.run({ ...breaker, id: 'c2', type: 'rollback', action: { open: false } })).toMatchObject({
      status: 'delivered',
    });
    expect(poolWeights()).toEqual([
      ['llama8b-h100', 400],
      ['llama8b-a100', 600],
    ]);
    // The a100 pool gains traffic in the shift and h100 in the rollback: each is read first; the
    // pool that only loses traffic (h100 in the shift, in the circuit break) is not.
    expect(summary()).toEqual([
      `GET ${POOL_ROUTE} → 200`,
      `GET ${inferencePoolPath('llama8b-a100')} → 200`,
      `PATCH ${POOL_ROUTE} dryRun=All → 200`,
      `PATCH ${POOL_ROUTE} → 200`,
      `GET ${POOL_ROUTE} → 200`,
      `PATCH ${POOL_ROUTE} dryRun=All → 200`,
      `PATCH ${POOL_ROUTE} → 200`,
      `GET ${POOL_ROUTE} → 200`,
      `GET ${inferencePoolPath('llama8b-h100')} → 200`,
      `PATCH ${POOL_ROUTE} dryRun=All → 200`,
      `PATCH ${POOL_ROUTE} → 200`,
    ]);
    expect(api.requests.find((r) => r.method === 'PATCH')!.body).toEqual({
      metadata: { resourceVersion: '30' },
      spec: {
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: '/' } }],
            backendRefs: [
              {
                group: 'inference.networking.k8s.io',
                kind: 'InferencePool',
                name: 'llama8b-h100',
                weight: 400,
              },
              {
                group: 'inference.networking.k8s.io',
                kind: 'InferencePool',
                name: 'llama8b-a100',
                weight: 600,
              },
            ],
          },
        ],
      },
    });
    await k8s.queue.close();
  });

  test('llm-d / GIE: no traffic is moved onto an InferencePool its gateway rejects or that does not exist', async () => {
    api = await startFakeKubernetesApi({
      [POOL_ROUTE]: poolRouteObject(),
      [inferencePoolPath('llama8b-a100')]: inferencePoolObject('llama8b-a100', [
        condition('Accepted', 'True', 'Accepted'),
        condition('ResolvedRefs', 'False', 'InvalidExtensionRef', 'Service llama8b-a100-epp not found'),
      ]),
    });
    const k8s = start(POOL_TRAFFIC, giePools);
    const onto = (id: string, weights: Record<string, number>) =>
      action(id, 'apply', 'shift_traffic', { weights }, { model: 'llama8b' } as never);
    const rejected = await k8s.run(onto('s1', { h100: 0.4, a100: 0.6 }));
    expect(rejected).toMatchObject({ status: 'failed', attempts: 1, httpStatus: null });
    expect(rejected.error).toContain('InferencePool llm/llama8b-a100 is not ready on inference-gateway');
    expect(rejected.error).toContain(
      'ResolvedRefs False, InvalidExtensionRef: Service llama8b-a100-epp not found',
    );
    const missing = await k8s.run(onto('s2', { h100: 0.9, a100: 0.1 }));
    expect(missing).toMatchObject({ status: 'failed', attempts: 1, httpStatus: 404 });
    expect(missing.error).toContain('inferencepools "llama8b-h100" not found');
    expect(poolWeights()).toEqual([
      ['llama8b-h100', 700],
      ['llama8b-a100', 300],
    ]);
    expect(api.requests.filter((r) => r.method === 'PATCH')).toEqual([]);
    await k8s.queue.close();
  });

  test('the value before an apply is kept in DuckDB: a retried apply does not overwrite it and a restart does not lose it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'governor-rollback-'));
    let store = await createStore({ dataDir: dir });
    try {
      api = await startFakeKubernetesApi({ [SCALE]: scaleObject(2) });
      // The API server stores the first real patch but times out answering it: the queue retries,
      // and the retry reads back its own 5.
      api.storeButFailNextPatch(SCALE, 504);
      const first = start({ max_attempts: 3 }, pools, createDuckDbRollbackStore(store));
      expect(await first.run(action('a1', 'apply', 'scale', { from: 3, to: 5 }))).toMatchObject({
        status: 'delivered',
        attempts: 2,
      });
      expect(replicasOf(api)).toBe(5);
      await first.queue.close();
      await store.close();

      // A new Governor process on the same data: the rollback restores the 2 read before the first attempt.
      store = await createStore({ dataDir: dir });
      const second = start({}, pools, createDuckDbRollbackStore(store));
      expect(await second.run(action('a2', 'rollback', 'scale', { from: 5, to: 3 }))).toMatchObject({
        status: 'delivered',
      });
      expect(replicasOf(api)).toBe(2);
      expect(summary()).toEqual([
        `GET ${SCALE} → 200`,
        `PATCH ${SCALE} dryRun=All → 200`,
        `PATCH ${SCALE} → 504`,
        `GET ${SCALE} → 200`,
        `PATCH ${SCALE} dryRun=All → 200`,
        `PATCH ${SCALE} → 200`,
        `GET ${SCALE} → 200`,
        `PATCH ${SCALE} dryRun=All → 200`,
        `PATCH ${SCALE} → 200`,
      ]);
      const rows = await store.query<Record<string, unknown>>(
        'SELECT actuator, recommendation_id, action_id, object, value FROM control_rollback_values',
      );
      expect(rows.map((r) => ({ ...r, value: JSON.parse(String(r.value)) }))).toEqual([
        {
          actuator: 'cluster',
          recommendation_id: 'rec-1',
          action_id: 'a1',
          object: SCALE,
          value: { replicas: 2 },
        },
      ]);
      await second.queue.close();
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the schema check rejects what a real API server would: bad weights, replicas, unknown fields', () => {
    const route = routeObject();
    expect(isValidKubernetesObject('HTTPRoute', route)).toBe(true);
    route.spec.rules[0]!.backendRefs[0]!.weight = 1_000_001;
    expect(isValidKubernetesObject('HTTPRoute', route)).toBe(false);
    expect(isValidKubernetesObject('Scale', scaleObject(3))).toBe(true);
    expect(isValidKubernetesObject('Scale', { ...scaleObject(3), spec: { replicas: '3' } })).toBe(false);
    expect(isValidKubernetesObject('Scale', { ...scaleObject(3), spec: { replica: 3 } })).toBe(false);
    // A Service backendRef needs a port (the CRD's CEL rule); an InferencePool one does not.
    const portless = routeObject();
    delete (portless.spec.rules[0]!.backendRefs[0] as { port?: number }).port;
    expect(isValidKubernetesObject('HTTPRoute', portless)).toBe(false);
    expect(isValidKubernetesObject('HTTPRoute', poolRouteObject())).toBe(true);
    expect(isValidKubernetesObject('InferencePool', inferencePoolObject('llama8b-h100'))).toBe(true);
    const noPorts = inferencePoolObject('llama8b-h100');
    noPorts.spec.targetPorts = [];
    expect(isValidKubernetesObject('InferencePool', noPorts)).toBe(false);
    expect(
      isValidKubernetesObject('InferencePool', {
        ...inferencePoolObject('llama8b-h100'),
        spec: { ...inferencePoolObject('llama8b-h100').spec, weight: 3 },
      }),
    ).toBe(false);
  });
});
