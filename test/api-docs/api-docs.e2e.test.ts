import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, launchChromium } from '../../apps/console/test/launch-chromium.ts';
import { type TestGovernor, startTestGovernor } from '../../apps/server/src/otlp/start-test-governor.ts';

// /api/docs in real Chromium: the page renders every documented operation from /api/openapi.json
// with no network access beyond Governor itself, and an operation opens to its schemas.

const SCREENSHOT = process.env.API_DOCS_SCREENSHOT ?? '/tmp/gov/api-docs.png';

let g: TestGovernor;
let browser: Browser;

beforeAll(async () => {
  g = await startTestGovernor();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await g?.close();
});

describe('GET /api/docs', () => {
  it('shows every route of the OpenAPI document, with its schemas, using only Governor', async () => {
    const doc = (await (await fetch(`${g.url}/api/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
    );
    const page = await browser.newPage({ viewport: { width: 1280, height: 2400 } });
    const foreign: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(g.url)) foreign.push(r.url());
    });
    await page.goto(`${g.url}/api/docs`);
    await page.locator('.opblock-summary').first().waitFor();
    const shown = await page.locator('.opblock-summary').evaluateAll((blocks) =>
      blocks.map((b) => {
        const method = b.querySelector('.opblock-summary-method')?.textContent?.trim() ?? '';
        const path = b.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? '';
        return `${method} ${path}`;
      }),
    );
    expect([...shown].sort()).toEqual([...operations].sort());

    // Opening GET /api/signals shows its parameters and the response schema.
    await page.locator('#operations-signals-get_api_signals .opblock-summary').click();
    const signals = page.locator('#operations-signals-get_api_signals');
    await signals.locator('.parameters').waitFor();
    expect(await signals.locator('.parameter__name').allInnerTexts()).toEqual(
      expect.arrayContaining([expect.stringContaining('window'), expect.stringContaining('at')]),
    );
    await expect.poll(() => page.locator('.models').textContent()).toContain('SignalsSnapshot');
    await page.screenshot({ path: SCREENSHOT, fullPage: false });
    expect(foreign).toEqual([]);
  });
});
