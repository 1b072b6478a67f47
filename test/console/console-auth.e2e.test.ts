// page.evaluate callbacks run in the browser and use its globals.
/// <reference lib="dom" />
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, launchChromium } from '../../apps/console/test/launch-chromium.ts';
import { type RunningGovernor, startGovernor } from '../../apps/server/src/index.ts';
import { GovernorConfig } from '../../packages/conventions/src/index.ts';
import { ensureConsoleBuilt } from './support/start-console-fixture.ts';

// With API tokens configured, the console page loads without one, asks for a token on the first
// 401, keeps it in the browser and sends it on every call (the SSE stream included).

const READ_TOKEN = 'console-e2e-read-token-0001';
let governor: RunningGovernor;
let dataDir: string;
let browser: Browser;

beforeAll(async () => {
  ensureConsoleBuilt();
  dataDir = mkdtempSync(join(tmpdir(), 'governor-console-auth-'));
  governor = await startGovernor({
    config: GovernorConfig.parse({ server: { http_port: 0, grpc_port: 0, data_dir: dataDir } }),
    env: { GOVERNOR_TOKENS: `viewer:read:${READ_TOKEN}` },
  });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await governor?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('console with auth on', () => {
  it('asks for a token, then works with it', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${governor.httpUrl}/?view=sql`);
    await page.waitForSelector('[data-testid="auth-banner"]');
    expect(await page.textContent('[data-testid="auth-banner"]')).toContain('needs an API token');

    await page.fill('[data-testid="auth-banner"] input', READ_TOKEN);
    await Promise.all([page.waitForEvent('load'), page.click('button:text("Use token")')]);
    await page.waitForSelector(
      '[data-testid="result-table"], [data-testid="sql-results"] [data-state="empty"]',
    );
    await page.waitForSelector('[data-testid="live-mode"][data-mode="sse"]');
    expect(await page.locator('[data-testid="auth-banner"]').count()).toBe(0);

    // GET /api/storage needs only the read scope.
    await page.goto(`${governor.httpUrl}/?view=storage`);
    await page.waitForSelector('[data-testid="storage-table"] tr[data-table="span_store"]');
    await page.waitForSelector('[data-testid="storage-runs"] [data-state="empty"]');
    expect(await page.locator('[data-testid="auth-banner"]').count()).toBe(0);
    await page.close();
  });
});
