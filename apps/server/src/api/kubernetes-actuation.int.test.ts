import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuditView } from '@governor/control';
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
// is a second patch restoring the replicas the cluster had.

const SCALE = '/apis/apps/v1/namespaces/llm/deployments/vllm-llama8b-h100/scale';

let g: TestGovernor | null = null;
let api: FakeKubernetesApi | null = null;
afterEach(async () => {
  await g?.close();
  await api?.close();
  g = null;
  api = null;
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

describe('a policy auto-applies through the Kubernetes API and verification rolls it back', () => {
  test('scale-in 4 → 3 is a schema-valid patch; the failed verification patches 4 back', async () => {
    const scale = {
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name: 'vllm-llama8b-h100', namespace: 'llm', resourceVersion: '7' },
      spec: { replicas: 4 },
      status: { replicas: 4, selector: 'app=vllm-llama8b-h100' },
    };
    api = await startFakeKubernetesApi({ [SCALE]: scale });
    const dir = mkdtempSync(join(tmpdir(), 'governor-kube-'));
    const kubeconfig = join(dir, 'config');
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        // The test's API server speaks plain HTTP, which the client allows only with this flag.
        clusters: [{ name: 'test', cluster: { server: api.url, 'insecure-skip-tls-verify': true } }],
        users: [{ name: 'governor', user: { token: 'test-token' } }],
        contexts: [{ name: 'test', context: { cluster: 'test', user: 'governor' } }],
        'current-context': 'test',
      }),
    );
    process.env.KUBECONFIG = kubeconfig;
    g = await startTestGovernor({
      pools: TEST_POOLS.map((p) =>
        p.name === 'h100-east'
          ? { ...p, kubernetes: { kind: 'Deployment', name: 'vllm-llama8b-h100', namespace: 'llm' } }
          : { ...p, min_replicas: 2 },
      ),
      actuators: [{ name: 'cluster', type: 'kubernetes' }],
    });
    const put = await g.request('PUT', '/api/policies', {
      policies: [{ name: 'auto-scale', match: { kind: ['scale'] }, autoApply: true, minConfidence: 0.3 }],
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);

    // Light load on four H100 replicas: one is taken away (after a whole control window of evidence).
    const light = { ...H100_TRAFFIC, replicas: 4 };
    const warm = await runTicks(g, [light, A100_TRAFFIC], 0, 330_000);
    const scaleIn = warm.flatMap((t) => t.actions).find((a) => a.kind === 'scale')!;
    expect(scaleIn).toMatchObject({ target: { pool: 'h100-east' }, action: { from: 4, to: 3 } });
    const patches = () => api!.requests.filter((r) => r.method === 'PATCH' && r.path === SCALE);
    await until(() => (patches().length >= 2 ? true : undefined), 'the scale-in patches');
    const [dryRun, applied] = patches();
    expect(dryRun).toMatchObject({ query: { dryRun: 'All' }, status: 200, body: { spec: { replicas: 3 } } });
    expect(applied).toMatchObject({ status: 200, body: { spec: { replicas: 3 } } });
    expect(applied!.query.dryRun).toBeUndefined();
    expect(applied!.contentType).toBe('application/merge-patch+json');
    expect(isValidKubernetesObject('Scale', api.objects.get(SCALE))).toBe(true);
    expect((api.objects.get(SCALE)!.spec as { replicas: number }).replicas).toBe(3);

    // The pool then queues past the SLO; after the cooldown verification rolls the scale-in back.
    const appliedAtMs = Date.parse(scaleIn.at) - T0_MS;
    const struggling = { ...H100_TRAFFIC, replicas: 3, queueMs: 3000 };
    await runTicks(g, [struggling, A100_TRAFFIC], 330_000, appliedAtMs + 330_000);
    await until(() => (patches().length >= 4 ? true : undefined), 'the rollback patches');
    const [rollbackDryRun, rollback] = patches().slice(2);
    expect(rollbackDryRun).toMatchObject({
      query: { dryRun: 'All' },
      status: 200,
      body: { spec: { replicas: 4 } },
    });
    expect(rollback).toMatchObject({ status: 200, body: { spec: { replicas: 4 } } });
    expect((api.objects.get(SCALE)!.spec as { replicas: number }).replicas).toBe(4);
    expect(api.requests.every((r) => r.status < 400)).toBe(true);

    const { body } = await g.request<{ actions: AuditView[] }>('GET', '/api/actions?limit=1000');
    const log = body.actions.filter((x) => x.recommendationId === scaleIn.recommendationId);
    expect(log.map((x) => x.decision)).toEqual(expect.arrayContaining(['auto_applied', 'rolled_back']));
    expect(log.find((x) => x.decision === 'auto_applied')?.actor).toBe('policy:auto-scale');
  }, 180_000);
});
