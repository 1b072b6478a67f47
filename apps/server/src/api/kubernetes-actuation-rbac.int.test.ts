import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createActuatorsFromConfig, createDeliveryQueue, type DeliveryOutcome } from '@governor/control';
import {
  type FakeKubernetesApi,
  type PolicyRule,
  isAllowedBy,
  resourceRequestOf,
  startFakeKubernetesApi,
} from '@governor/control/testing';
import {
  type ActionByKind,
  ActuatorConfig,
  type ControlAction,
  PoolConfig,
  type RecommendationKind,
} from '@governor/conventions';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { parseAllDocuments } from 'yaml';

// deploy/kubernetes as an operator applies it: the example config (governor-kubernetes.yaml), the
// route and InferencePools it acts on (httproute-inference-pools.yaml) and the Role (rbac.yaml). The
// test API server enforces the Role; every action the kubernetes actuator carries out, and its
// rollback, must get through it, and every grant in it must be used by one of them — the Role is
// exactly what the actuator needs.

const DEPLOY = resolve(import.meta.dirname, '../../../../deploy/kubernetes');
const read = (file: string) =>
  parseAllDocuments(readFileSync(join(DEPLOY, file), 'utf8')).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]!.message}`);
    return doc.toJS() as Record<string, unknown> & {
      kind: string;
      metadata: { name: string; namespace: string };
    };
  });

const config = read('governor-kubernetes.yaml')[0] as unknown as { pools: unknown[]; actuators: unknown[] };
const pools = config.pools.map((p) => PoolConfig.parse(p));
const actuators = config.actuators.map((a) => ActuatorConfig.parse({ backoff_ms: 5, ...(a as object) }));
const role = read('rbac.yaml').find((d) => d.kind === 'Role') as unknown as { rules: PolicyRule[] };

const scalePath = (name: string) => `/apis/apps/v1/namespaces/llm/deployments/${name}/scale`;
const objectPath = (o: {
  apiVersion?: unknown;
  kind: string;
  metadata: { name: string; namespace: string };
}) =>
  `/apis/${String(o.apiVersion)}/namespaces/${o.metadata.namespace}/${o.kind.toLowerCase()}s/${o.metadata.name}`;

function clusterObjects() {
  const objects: Record<
    string,
    Record<string, unknown> & { metadata: { resourceVersion: string; [k: string]: unknown } }
  > = {};
  for (const doc of read('httproute-inference-pools.yaml'))
    objects[objectPath(doc)] = { ...doc, metadata: { ...doc.metadata, resourceVersion: '1' } };
  for (const pool of pools) {
    const name = pool.kubernetes!.name;
    objects[scalePath(name)] = {
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name, namespace: 'llm', resourceVersion: '1' },
      spec: { replicas: 2 },
      status: { replicas: 2, selector: `app=${name}` },
    };
  }
  return objects;
}

let api: FakeKubernetesApi | null = null;
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'governor-rbac-'));
  return () => rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await api?.close();
  api = null;
});

async function runAll(actions: ControlAction[], rules: readonly PolicyRule[]) {
  api = await startFakeKubernetesApi(clusterObjects(), { role: { rules } });
  const kubeconfig = join(dir, 'config');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'test', cluster: { server: api.url, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'governor', user: { token: 'test-token' } }],
      contexts: [{ name: 'test', context: { cluster: 'test', user: 'governor' } }],
      'current-context': 'test',
    }),
  );
  process.env.KUBECONFIG = kubeconfig;
  const outcomes: DeliveryOutcome[] = [];
  const queue = createDeliveryQueue({
    actuators: createActuatorsFromConfig(actuators, {}, pools),
    onOutcome: (o) => outcomes.push(o),
  });
  for (const action of actions) {
    queue.enqueue(action);
    await queue.drain(10_000);
  }
  await queue.close();
  return outcomes;
}

let n = 0;
const act = <K extends RecommendationKind>(
  recommendationId: string,
  type: 'apply' | 'rollback',
  kind: K,
  target: ControlAction['target'],
  action: ActionByKind[K],
) =>
  ({
    id: `a${++n}`,
    recommendationId,
    type,
    kind,
    target,
    action,
    at: '2026-01-01T00:05:00.000Z',
  }) as Extract<ControlAction, { kind: K }>;

/** Every kind the actuator carries out, on both pools, each followed by its rollback. */
const EVERY_ACTION = [
  act('r1', 'apply', 'scale', { pool: 'h100' }, { from: 2, to: 3 }),
  act('r1', 'rollback', 'scale', { pool: 'h100' }, { from: 3, to: 2 }),
  act('r2', 'apply', 'scale', { pool: 'a100' }, { from: 2, to: 1 }),
  act('r2', 'rollback', 'scale', { pool: 'a100' }, { from: 1, to: 2 }),
  act('r3', 'apply', 'shift_traffic', { model: 'llama8b' }, { weights: { h100: 0.2, a100: 0.8 } }),
  act('r3', 'rollback', 'shift_traffic', { model: 'llama8b' }, { weights: { h100: 0.7, a100: 0.3 } }),
  act('r4', 'apply', 'circuit_break', { pool: 'a100' }, { open: true }),
  act('r4', 'rollback', 'circuit_break', { pool: 'a100' }, { open: false }),
];

describe('deploy/kubernetes/rbac.yaml', () => {
  test('lets every action of the example config and its rollback through, and grants nothing unused', async () => {
    const outcomes = await runAll(EVERY_ACTION, role.rules);
    expect(outcomes.map((o) => [o.status, o.error])).toEqual(EVERY_ACTION.map(() => ['delivered', null]));
    const asked = api!.requests.map((r) => resourceRequestOf(r.method, r.path));
    expect(api!.requests.every((r) => r.status === 200)).toBe(true);
    // Each (group, resource, name, verb) the Role grants is one the actuator asked for.
    for (const rule of role.rules)
      for (const group of rule.apiGroups)
        for (const resource of rule.resources)
          for (const name of rule.resourceNames ?? [])
            for (const verb of rule.verbs)
              expect(
                asked.some(
                  (a) => a.group === group && a.resource === resource && a.name === name && a.verb === verb,
                ),
                `${verb} ${group}/${resource} ${name} granted but never used`,
              ).toBe(true);
    // And what it asks is exactly that: the InferencePools are only ever read.
    expect([...new Set(asked.map((a) => `${a.verb} ${a.group}/${a.resource}`))].sort()).toEqual([
      'get apps/deployments/scale',
      'get gateway.networking.k8s.io/httproutes',
      'get inference.networking.k8s.io/inferencepools',
      'patch apps/deployments/scale',
      'patch gateway.networking.k8s.io/httproutes',
    ]);
    expect(asked.every((a) => isAllowedBy(role.rules, a))).toBe(true);
  });

  test('without the inferencepools grant, moving traffic onto a pool fails with the API server’s 403', async () => {
    const withoutPools = role.rules.filter((r) => !r.resources.includes('inferencepools'));
    const [apply] = await runAll([EVERY_ACTION[4]!], withoutPools);
    expect(apply).toMatchObject({ status: 'failed', attempts: 1, httpStatus: 403 });
    expect(apply!.error).toContain(
      'cannot get resource "inferencepools" in API group "inference.networking.k8s.io" in the namespace "llm"',
    );
    expect(api!.requests.filter((r) => r.method === 'PATCH')).toEqual([]);
  });
});
