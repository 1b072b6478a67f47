import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, type Page, launchChromium } from '../../apps/console/test/launch-chromium.ts';
import {
  A100_TRAFFIC,
  H100_TRAFFIC,
  TEST_POOLS,
  type TestGovernor,
  runTicks,
  startTestGovernor,
} from '../../apps/server/src/api/fixtures/control-test-governor.ts';
import { T0_MS } from '../../apps/server/src/api/fixtures/fleet-telemetry.ts';
import {
  type FakeKubernetesApi,
  isValidKubernetesObject,
  type RecordedRequest,
  startFakeKubernetesApi,
} from '../../packages/control/src/actuators/kubernetes/fake-kubernetes-api.ts';
import type { Recommendation } from '../../packages/conventions/src/index.ts';
import { ensureConsoleBuilt } from './support/start-console-fixture.ts';

// Issue #26's done-when, the way an operator gets there: a scale-in waits in the inbox; in the
// console's Policies view the operator creates a policy that auto-applies scale on the pool (the
// preview says it would apply that recommendation) and saves it; at the next tick the control loop
// auto-applies it and the kubernetes actuator patches the Deployment's scale subresource on a
// Kubernetes API (a test server checking every object against the Kubernetes OpenAPI schema, dry run
// first); the pool then breaks its SLO, verification fails, and a second patch restores the replicas
// the cluster had. The console shows each step; screenshots go to $GOVERNOR_SCREENSHOTS (/tmp/gov).

const SHOTS = process.env.GOVERNOR_SCREENSHOTS ?? '/tmp/gov';
const SCALE = '/apis/apps/v1/namespaces/llm/deployments/vllm-llama8b-h100/scale';
const POLICY = 'h100-autoscale';
const WINDOW_MS = 120_000;

let api: FakeKubernetesApi;
let g: TestGovernor;
let browser: Browser;
let page: Page;
let kubeDir: string;

beforeAll(async () => {
  ensureConsoleBuilt();
  mkdirSync(SHOTS, { recursive: true });
  api = await startFakeKubernetesApi({
    [SCALE]: {
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name: 'vllm-llama8b-h100', namespace: 'llm', resourceVersion: '7' },
      spec: { replicas: 4 },
      status: { replicas: 4, selector: 'app=vllm-llama8b-h100' },
    },
  });
  kubeDir = mkdtempSync(join(tmpdir(), 'governor-kube-'));
  writeFileSync(
    join(kubeDir, 'config'),
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
  process.env.KUBECONFIG = join(kubeDir, 'config');
  g = await startTestGovernor({
    pools: TEST_POOLS.map((p) =>
      p.name === 'h100-east'
        ? { ...p, kubernetes: { kind: 'Deployment', name: 'vllm-llama8b-h100', namespace: 'llm' } }
        : { ...p, min_replicas: 2 },
    ),
    actuators: [{ name: 'cluster', type: 'kubernetes' }],
    // A 2-minute control window and wait before verifying keep the test short (the defaults are 5).
    control: { window: '2m', cooldown_s: 120, verify_after_s: 120 },
  });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
  page.setDefaultTimeout(20_000);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await g?.close();
  await api?.close();
  if (kubeDir) rmSync(kubeDir, { recursive: true, force: true });
});

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: `${SHOTS}/k8s-chain-${name}.png`, fullPage: true });
}

async function until<T>(
  read: () => T | undefined | Promise<T | undefined>,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The audit's decisions on the scale-in, oldest first. */
async function decisionsOn(id: string): Promise<string[]> {
  const { body } = await g.request<{ actions: { recommendationId: string | null; decision: string }[] }>(
    'GET',
    '/api/actions?limit=1000',
  );
  return body.actions
    .filter((a) => a.recommendationId === id)
    .map((a) => a.decision)
    .reverse();
}
/** Delivery outcomes are audited just after the actuator returns: wait for them, not for time. */
const deliveriesAudited = (id: string, n: number) =>
  until(
    async () => ((await decisionsOn(id)).filter((d) => d === 'delivered').length >= n ? true : undefined),
    `${n} audited deliveries`,
  );
const scalePatches = () => api.requests.filter((r) => r.method === 'PATCH' && r.path === SCALE);
const replicasOnCluster = () => (api.objects.get(SCALE)!.spec as { replicas: number }).replicas;
const describeRequest = (r: RecordedRequest) =>
  `${r.method} ${r.path}${r.query.dryRun ? ' ?dryRun=All' : ''} ${JSON.stringify(r.body ?? null)} → ${r.status}`;

describe('a policy edited in the console auto-applies through the Kubernetes API and is rolled back', () => {
  let scaleIn: Recommendation;
  let appliedAtMs: number;

  it('the operator creates an auto-apply policy for the waiting scale-in in the Policies view', async () => {
    // Light load on four H100 replicas for a whole control window: a scale-in from 4 (to the count the
    // pool model finds enough) waits for a human. The policy's max_step of 1 applies it as 4 → 3.
    await runTicks(g, [{ ...H100_TRAFFIC, replicas: 4 }, A100_TRAFFIC], 0, WINDOW_MS + 30_000);
    const open = await g.request<{ recommendations: Recommendation[] }>(
      'GET',
      '/api/recommendations?state=proposed',
    );
    scaleIn = open.body.recommendations.find((r) => r.kind === 'scale' && r.target.pool === 'h100-east')!;
    expect(scaleIn, 'a proposed scale-in of h100-east').toBeDefined();
    const proposed = scaleIn.action as { from: number; to: number };
    expect(proposed.from).toBe(4);
    expect(proposed.to).toBeLessThan(4);
    expect(proposed.to).toBeGreaterThanOrEqual(1);
    expect(api.requests).toEqual([]);

    await page.goto(`${g.url}/?view=policies`);
    await page.waitForSelector('[data-testid="policies-list"] [data-state="empty"]');
    await page.click('button:text("New policy")');
    const editor = page.locator('[data-testid="policy-editor"]');
    await editor.locator('input[name="name"]').fill(POLICY);
    await editor.locator('input[name="kind-scale"]').check();
    await editor.locator('input[name="target"]').fill('pool=h100-east');
    await editor.locator('input[name="autoApply"]').check();
    await editor.locator('input[name="minConfidence"]').fill('0.3');
    await editor.locator('input[name="maxStep"]').fill('1');
    await page.waitForSelector(
      `[data-testid="policy-preview"] tr[data-recommendation-id="${scaleIn.id}"][data-decision="auto_apply"]`,
    );
    expect(await page.textContent('[data-testid="preview-summary"]')).toMatch(/would auto-apply 1\./);
    await shot('1-policy-preview');

    await page.click('button:text("Save policies")');
    await page.waitForSelector(`[data-testid="policies-table"] tr[data-policy="${POLICY}"]`);
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="policy-change"]').length === 1);
    await shot('2-policy-saved');
    const saved = await g.request<{ source: string; policies: unknown[] }>('GET', '/api/policies');
    expect(saved.body).toMatchObject({
      source: 'api',
      policies: [
        {
          name: POLICY,
          match: { kind: ['scale'], target: 'pool=h100-east' },
          autoApply: true,
          maxStep: 1,
          minConfidence: 0.3,
        },
      ],
    });
    // Saving a policy changes nothing on the cluster by itself: the control loop acts at its next tick.
    expect(api.requests).toEqual([]);
  });

  it('the next tick auto-applies it: a dry-run and a real schema-valid merge patch of the scale subresource', async () => {
    const [tick] = await runTicks(
      g,
      [{ ...H100_TRAFFIC, replicas: 4 }, A100_TRAFFIC],
      WINDOW_MS + 30_000,
      WINDOW_MS + 60_000,
    );
    const applied = tick!.actions.find((a) => a.recommendationId === scaleIn.id);
    expect(applied).toMatchObject({ type: 'apply', kind: 'scale', action: { from: 4, to: 3 } });
    appliedAtMs = Date.parse(applied!.at) - T0_MS;
    await until(() => (scalePatches().length >= 2 ? true : undefined), 'the scale-in patches');
    const [dryRun, real] = scalePatches();
    expect(dryRun).toMatchObject({
      query: { dryRun: 'All', fieldValidation: 'Strict', fieldManager: 'governor' },
      contentType: 'application/merge-patch+json',
      body: { metadata: { resourceVersion: '7' }, spec: { replicas: 3 } },
      status: 200,
    });
    expect(real).toMatchObject({
      query: { fieldValidation: 'Strict' },
      contentType: 'application/merge-patch+json',
      body: { metadata: { resourceVersion: '7' }, spec: { replicas: 3 } },
      status: 200,
    });
    expect(real!.query.dryRun).toBeUndefined();
    expect(replicasOnCluster()).toBe(3);
    expect(isValidKubernetesObject('Scale', api.objects.get(SCALE))).toBe(true);

    await deliveriesAudited(scaleIn.id, 1);
    await page.goto(`${g.url}/?view=recommendations&tab=applied`);
    const card = page.locator(`[data-testid="recommendation"][data-id="${scaleIn.id}"]`);
    await card.waitFor();
    expect(await card.getAttribute('data-state')).toBe('applied');
    // The audit log names the policy that applied it and the actuator's delivery.
    await page.waitForFunction((policy) => {
      const text = document.querySelector('[data-testid="audit-log"]')?.textContent ?? '';
      return text.includes(`policy:${policy}`) && text.includes('actuator:cluster');
    }, POLICY);
    await shot('3-applied');
  });

  it('the SLO breaks, verification fails, and a second patch restores the replicas the cluster had', async () => {
    const struggling = { ...H100_TRAFFIC, replicas: 3, queueMs: 3000 };
    await runTicks(g, [struggling, A100_TRAFFIC], WINDOW_MS + 60_000, appliedAtMs + WINDOW_MS + 30_000);
    await until(() => (scalePatches().length >= 4 ? true : undefined), 'the rollback patches');
    const [rollbackDryRun, rollback] = scalePatches().slice(2);
    expect(rollbackDryRun).toMatchObject({
      query: { dryRun: 'All' },
      body: { spec: { replicas: 4 } },
      status: 200,
    });
    expect(rollback).toMatchObject({ body: { spec: { replicas: 4 } }, status: 200 });
    expect(rollback!.query.dryRun).toBeUndefined();
    expect(replicasOnCluster()).toBe(4);
    expect(isValidKubernetesObject('Scale', api.objects.get(SCALE))).toBe(true);
    // Every request the cluster saw, for the record: GET, dry run, patch — twice, nothing refused.
    const sent = api.requests.map(describeRequest);
    console.log(`Kubernetes API requests:\n  ${sent.join('\n  ')}`);
    expect(api.requests.map((r) => `${r.method}${r.query.dryRun ? ' dryRun' : ''} ${r.status}`)).toEqual([
      'GET 200',
      'PATCH dryRun 200',
      'PATCH 200',
      'GET 200',
      'PATCH dryRun 200',
      'PATCH 200',
    ]);

    await deliveriesAudited(scaleIn.id, 2);
    // (A refresh re-states the open recommendation when its evidence moves; the console hides them too.)
    expect((await decisionsOn(scaleIn.id)).filter((d) => d !== 'refreshed')).toEqual([
      'proposed',
      'auto_applied',
      'delivered',
      'rolled_back',
      'delivered',
    ]);

    await page.goto(`${g.url}/?view=recommendations&tab=rolled_back`);
    const card = page.locator(`[data-testid="recommendation"][data-id="${scaleIn.id}"]`);
    await card.waitFor();
    expect(await card.getAttribute('data-state')).toBe('rolled_back');
    await shot('4-rolled-back');
  });
});
