import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuditView } from '@governor/control';
import type { ControlAction } from '@governor/conventions';
import {
  type FakeKubernetesApi,
  isValidKubernetesObject,
  startFakeKubernetesApi,
} from '@governor/control/testing';
import { afterEach, describe, expect, test } from 'vitest';
import {
  A100_TRAFFIC,
  H100_TRAFFIC,
  TEST_POOLS,
  type TestGovernor,
  runTicks,
  startTestGovernor,
} from './fixtures/control-test-governor.ts';
import { T0_MS } from './fixtures/fleet-telemetry.ts';

// The whole chain on a cluster: a policy set through PUT /api/policies (the call the console's
// Policies view makes) auto-applies a scale-in, the kubernetes actuator patches the Deployment's
// scale subresource on a Kubernetes API (a test server that validates every object against the
// Kubernetes OpenAPI schema), verification finds the SLO broken after the cooldown, and the rollback
// is a second patch restoring the replicas the cluster had — also when Governor restarted in between.

const SCALE = '/apis/apps/v1/namespaces/llm/deployments/vllm-llama8b-h100/scale';

let g: TestGovernor | null = null;
let api: FakeKubernetesApi | null = null;
let kubeDir: string | null = null;
afterEach(async () => {
  await g?.close();
  await api?.close();
  if (kubeDir) rmSync(kubeDir, { recursive: true, force: true });
  g = null;
  api = null;
  kubeDir = null;
});

async function until<T>(read: () => T | undefined, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A Kubernetes API holding the h100 pool's Deployment at `replicas`, and a kubeconfig pointing at it. */
async function startCluster(replicas: number): Promise<FakeKubernetesApi> {
  const scale = {
    apiVersion: 'autoscaling/v1',
    kind: 'Scale',
    metadata: { name: 'vllm-llama8b-h100', namespace: 'llm', resourceVersion: '7' },
    spec: { replicas },
    status: { replicas, selector: 'app=vllm-llama8b-h100' },
  };
  const cluster = await startFakeKubernetesApi({ [SCALE]: scale });
  kubeDir = mkdtempSync(join(tmpdir(), 'governor-kube-'));
  const kubeconfig = join(kubeDir, 'config');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      // The test's API server speaks plain HTTP, which the client allows only with this flag.
      clusters: [{ name: 'test', cluster: { server: cluster.url, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'governor', user: { token: 'test-token' } }],
      contexts: [{ name: 'test', context: { cluster: 'test', user: 'governor' } }],
      'current-context': 'test',
    }),
  );
  process.env.KUBECONFIG = kubeconfig;
  return cluster;
}

const CLUSTER_CONFIG = {
  pools: TEST_POOLS.map((p) =>
    p.name === 'h100-east'
      ? { ...p, kubernetes: { kind: 'Deployment', name: 'vllm-llama8b-h100', namespace: 'llm' } }
      : { ...p, min_replicas: 2 },
  ),
  actuators: [{ name: 'cluster', type: 'kubernetes' }],
};
const patches = () => api!.requests.filter((r) => r.method === 'PATCH' && r.path === SCALE);
const replicasOnCluster = () => (api!.objects.get(SCALE)!.spec as { replicas: number }).replicas;

/** Light load on four H100 replicas: after a whole control window of evidence some are taken away. */
async function autoApplyScaleIn(governor: TestGovernor) {
  const put = await governor.request('PUT', '/api/policies', {
    policies: [{ name: 'auto-scale', match: { kind: ['scale'] }, autoApply: true, minConfidence: 0.3 }],
  });
  expect(put.status, JSON.stringify(put.body)).toBe(200);
  const warm = await runTicks(governor, [{ ...H100_TRAFFIC, replicas: 4 }, A100_TRAFFIC], 0, 330_000);
  const scaleIn = warm.flatMap((t) => t.actions).find((a) => a.kind === 'scale')!;
  expect(scaleIn).toMatchObject({ target: { pool: 'h100-east' }, action: { from: 4 } });
  const to = (scaleIn.action as { to: number }).to;
  expect(to).toBeLessThan(4);
  expect(to).toBeGreaterThanOrEqual(1);
  await until(() => (patches().length >= 2 ? true : undefined), 'the scale-in patches');
  return { scaleIn, to };
}

/** The pool then queues past the SLO; after the cooldown verification rolls the scale-in back. */
async function breakTheSlo(governor: TestGovernor, scaleIn: ControlAction, replicas: number) {
  const appliedAtMs = Date.parse(scaleIn.at) - T0_MS;
  const struggling = { ...H100_TRAFFIC, replicas, queueMs: 3000 };
  await runTicks(governor, [struggling, A100_TRAFFIC], 330_000, appliedAtMs + 330_000);
  await until(() => (patches().length >= 4 ? true : undefined), 'the rollback patches');
}

async function expectRolledBackInAudit(governor: TestGovernor, scaleIn: ControlAction) {
  const { body } = await governor.request<{ actions: AuditView[] }>('GET', '/api/actions?limit=1000');
  const log = body.actions.filter((x) => x.recommendationId === scaleIn.recommendationId);
  expect(log.map((x) => x.decision)).toEqual(expect.arrayContaining(['auto_applied', 'rolled_back']));
  expect(log.find((x) => x.decision === 'auto_applied')?.actor).toBe('policy:auto-scale');
}

describe('a policy auto-applies through the Kubernetes API and verification rolls it back', () => {
  test('a scale-in from 4 is a schema-valid patch; the failed verification patches 4 back', async () => {
    api = await startCluster(4);
    g = await startTestGovernor(CLUSTER_CONFIG);
    const { scaleIn, to } = await autoApplyScaleIn(g);
    const [dryRun, applied] = patches();
    expect(dryRun).toMatchObject({ query: { dryRun: 'All' }, status: 200, body: { spec: { replicas: to } } });
    expect(applied).toMatchObject({ status: 200, body: { spec: { replicas: to } } });
    expect(applied!.query.dryRun).toBeUndefined();
    expect(applied!.contentType).toBe('application/merge-patch+json');
    expect(isValidKubernetesObject('Scale', api.objects.get(SCALE))).toBe(true);
    expect(replicasOnCluster()).toBe(to);

    await breakTheSlo(g, scaleIn, to);
    const [rollbackDryRun, rollback] = patches().slice(2);
    expect(rollbackDryRun).toMatchObject({
      query: { dryRun: 'All' },
      status: 200,
      body: { spec: { replicas: 4 } },
    });
    expect(rollback).toMatchObject({ status: 200, body: { spec: { replicas: 4 } } });
    expect(replicasOnCluster()).toBe(4);
    expect(api.requests.every((r) => r.status < 400)).toBe(true);
    await expectRolledBackInAudit(g, scaleIn);
  }, 180_000);

  test('a restart between apply and verification still rolls back to the replicas the cluster had', async () => {
    // The Deployment runs 5 while only 4 report telemetry (one still starting): Governor decides
    // 4 → fewer and the cluster goes there. Rolling back to Governor's belief would give 4; the value
    // read before the patch, kept in the data directory across the restart, is 5.
    api = await startCluster(5);
    g = await startTestGovernor(CLUSTER_CONFIG);
    const { scaleIn, to } = await autoApplyScaleIn(g);
    expect(replicasOnCluster()).toBe(to);

    const dataDir = g.dataDir;
    await g.close({ keepData: true });
    g = await startTestGovernor(CLUSTER_CONFIG, dataDir);
    await breakTheSlo(g, scaleIn, to);
    const [rollbackDryRun, rollback] = patches().slice(2);
    expect(rollbackDryRun).toMatchObject({
      query: { dryRun: 'All' },
      status: 200,
      body: { spec: { replicas: 5 } },
    });
    expect(rollback).toMatchObject({ status: 200, body: { spec: { replicas: 5 } } });
    expect(replicasOnCluster()).toBe(5);
    expect(isValidKubernetesObject('Scale', api.objects.get(SCALE))).toBe(true);
    await expectRolledBackInAudit(g, scaleIn);
  }, 180_000);
});
