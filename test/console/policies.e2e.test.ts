import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, type Page, launchChromium } from '../../apps/console/test/launch-chromium.ts';
import {
  A100_TRAFFIC,
  H100_TRAFFIC,
  type TestGovernor,
  WARM_UP_MS,
  runTicks,
  startTestGovernor,
} from '../../apps/server/src/api/fixtures/control-test-governor.ts';
import { ensureConsoleBuilt } from './support/start-console-fixture.ts';

// Policies edited in the console the way an operator would: created, previewed against the open
// recommendations, refused inline when invalid, edited, deleted — every change through
// PUT /api/policies, in the audit log, and still in force after Governor restarts on its data.

const SHOTS = process.env.GOVERNOR_SCREENSHOTS ?? '/tmp/gov';

let g: TestGovernor;
let browser: Browser;
let page: Page;
let scaleUpId: string;

beforeAll(async () => {
  ensureConsoleBuilt();
  mkdirSync(SHOTS, { recursive: true });
  g = await startTestGovernor();
  await runTicks(g, [H100_TRAFFIC, A100_TRAFFIC], 0, WARM_UP_MS);
  await runTicks(g, [{ ...H100_TRAFFIC, queueMs: 3000 }, A100_TRAFFIC], WARM_UP_MS, WARM_UP_MS + 30_000);
  const open = await g.request<{
    recommendations: { id: string; kind: string; target: { pool?: string }; action: { to?: number } }[];
  }>('GET', '/api/recommendations?state=proposed');
  const scaleUp = open.body.recommendations.find(
    (r) => r.kind === 'scale' && r.target.pool === 'h100-east' && r.action.to === 4,
  );
  expect(scaleUp, 'a proposed scale-up of h100-east 2 → 4').toBeDefined();
  scaleUpId = scaleUp!.id;
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
  page.setDefaultTimeout(20_000);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await g?.close();
});

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: `${SHOTS}/policies-${name}.png`, fullPage: true });
}

const previewRow = () =>
  page.locator(`[data-testid="policy-preview"] tr[data-recommendation-id="${scaleUpId}"]`);

async function policiesFromApi() {
  return (
    await g.request<{ source: string; updatedBy: string | null; policies: Record<string, unknown>[] }>(
      'GET',
      '/api/policies',
    )
  ).body;
}

describe('policies in the console', () => {
  it('creates a policy with a live preview of what it would auto-apply, refusing invalid values inline', async () => {
    await page.goto(`${g.url}/?view=policies`);
    await page.waitForSelector('[data-testid="policies-list"] [data-state="empty"]');
    expect(await page.textContent('[data-testid="policies-list"]')).toContain('every recommendation waits');

    await page.click('button:text("New policy")');
    const editor = page.locator('[data-testid="policy-editor"]');
    await editor.locator('input[name="name"]').fill('h100-scale');
    await editor.locator('input[name="kind-scale"]').check();
    await editor.locator('input[name="target"]').fill('pool=h100-*');
    await editor.locator('input[name="maxStep"]').fill('1');
    // The preview gates the open scale-up with this policy: auto-applied, one replica at a time.
    await page.waitForSelector(
      `[data-testid="policy-preview"] tr[data-recommendation-id="${scaleUpId}"][data-decision="auto_apply"]`,
    );
    expect(await previewRow().textContent()).toContain('step limited to max_step 1');
    expect(await page.textContent('[data-testid="preview-summary"]')).toMatch(/would auto-apply 1\./);
    await shot('preview');

    // Out of range: the API's validation message shows under the field, and nothing is saved.
    await editor.locator('input[name="minConfidence"]').fill('2');
    const minError = page.locator('[data-testid="field-error-minConfidence"]');
    await minError.waitFor();
    expect(await minError.textContent()).toMatch(/<=\s*1/);
    await page.click('button:text("Save policies")');
    await page.waitForSelector('[data-testid="field-error-minConfidence"]');
    expect(await editor.locator('input[name="minConfidence"]').getAttribute('aria-invalid')).toBe('true');
    await shot('invalid');
    expect((await policiesFromApi()).policies).toEqual([]);

    // Above the recommendation's confidence: the preview says it would wait for a human.
    await editor.locator('input[name="minConfidence"]').fill('1');
    await page.waitForSelector(
      `[data-testid="policy-preview"] tr[data-recommendation-id="${scaleUpId}"][data-decision="propose"]`,
    );
    // Any min_confidence above 0 asks for Governor's judgement, and this scale-up waits for a human
    // (it buys fewer tasks within the SLO than it costs): still proposed, and the preview says why.
    await editor.locator('input[name="minConfidence"]').fill('0.1');
    await page.waitForFunction(
      (id) =>
        document
          .querySelector(`[data-testid="policy-preview"] tr[data-recommendation-id="${id}"]`)
          ?.textContent?.includes('this waits') ?? false,
      scaleUpId,
    );
    expect(await previewRow().getAttribute('data-decision')).toBe('propose');
    // min_confidence 0 applies everything Governor recommends.
    await editor.locator('input[name="minConfidence"]').fill('0');
    await page.waitForSelector(
      `[data-testid="policy-preview"] tr[data-recommendation-id="${scaleUpId}"][data-decision="auto_apply"]`,
    );
    await page.click('button:text("Save policies")');
    await page.waitForSelector('[data-testid="policies-table"] tr[data-policy="h100-scale"]');
    expect(await page.locator('[data-testid="policy-editor"]').count()).toBe(0);
    const saved = await policiesFromApi();
    expect(saved.source).toBe('api');
    expect(saved.policies).toEqual([
      {
        name: 'h100-scale',
        match: { kind: ['scale'], target: 'pool=h100-*' },
        autoApply: true,
        maxStep: 1,
        minConfidence: 0,
        dryRun: false,
      },
    ]);
  });

  it('edits, refuses a duplicate name, deletes, and shows each change from the audit log', async () => {
    const row = page.locator('[data-testid="policies-table"] tr[data-policy="h100-scale"]');
    await row.locator('button:text("Edit")').click();
    const editor = page.locator('[data-testid="policy-editor"]');
    await editor.locator('input[name="dryRun"]').check();
    await page.waitForSelector(
      `[data-testid="policy-preview"] tr[data-recommendation-id="${scaleUpId}"][data-decision="dry_run"]`,
    );
    await page.click('button:text("Save policies")');
    await page.waitForFunction(() =>
      document
        .querySelector(
          '[data-testid="policies-table"] tr[data-policy="h100-scale"] [data-testid="policy-mode"]',
        )
        ?.textContent?.includes('dry run'),
    );

    // A second policy under the same name: the PUT's refusal shows under the name field.
    await page.click('button:text("New policy")');
    await editor.locator('input[name="name"]').fill('h100-scale');
    await page.click('button:text("Save policies")');
    const nameError = page.locator('[data-testid="field-error-name"]');
    await nameError.waitFor();
    expect(await nameError.textContent()).toContain('used twice');
    await editor.locator('input[name="name"]').fill('everything-else');
    await editor.locator('input[name="autoApply"]').uncheck();
    await page.click('button:text("Save policies")');
    await page.waitForSelector('[data-testid="policies-table"] tr[data-policy="everything-else"]');
    expect((await policiesFromApi()).policies.map((p) => p.name)).toEqual(['h100-scale', 'everything-else']);

    const extra = page.locator('[data-testid="policies-table"] tr[data-policy="everything-else"]');
    await extra.locator('button:text("Delete")').click();
    await extra.locator('button:text("Confirm delete")').click();
    await page.waitForSelector('[data-testid="policies-table"] tr[data-policy="everything-else"]', {
      state: 'detached',
    });
    expect((await policiesFromApi()).policies.map((p) => p.name)).toEqual(['h100-scale']);

    const audit = await g.request<{ actions: { decision: string; reason: string }[] }>(
      'GET',
      '/api/actions?limit=50',
    );
    const updates = audit.body.actions.filter((a) => a.decision === 'policies_updated');
    expect(updates).toHaveLength(4);
    await page.waitForFunction(
      () => document.querySelectorAll('[data-testid="policy-change"]').length === 4,
      undefined,
      { timeout: 20_000 },
    );
    await shot('list');
  });

  it('keeps the edited policies after Governor restarts on the same data', async () => {
    const dir = g.dataDir;
    await g.close({ keepData: true });
    g = await startTestGovernor({}, dir);
    const after = await policiesFromApi();
    expect(after.source).toBe('api');
    expect(after.policies).toEqual([
      {
        name: 'h100-scale',
        match: { kind: ['scale'], target: 'pool=h100-*' },
        autoApply: true,
        maxStep: 1,
        minConfidence: 0,
        dryRun: true,
      },
    ]);
    await page.goto(`${g.url}/?view=policies`);
    await page.waitForSelector('[data-testid="policies-table"] tr[data-policy="h100-scale"]');
    expect(await page.textContent('[data-testid="policies-list"]')).toContain('set through the API');
    expect(
      await page.textContent(
        '[data-testid="policies-table"] tr[data-policy="h100-scale"] [data-testid="policy-mode"]',
      ),
    ).toContain('dry run');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="policy-change"]').length === 4);
    await shot('after-restart');
  });
});
