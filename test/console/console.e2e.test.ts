// page.evaluate callbacks run in the browser and use its globals.
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Browser,
  type BrowserContext,
  type Page,
  launchChromium,
} from '../../apps/console/test/launch-chromium.ts';
import { formatBytes, formatCount } from '../../apps/console/src/lib/format.ts';
import type { StorageResponse } from '../../packages/conventions/src/index.ts';
import { type ConsoleFixture, startConsoleFixture } from './support/start-console-fixture.ts';

// The console in real Chromium against a real Governor fed by the simulator. Every view is
// opened the way an operator would, checked for real data, and screenshotted to
// test-artifacts/console/ (look at them when the UI changes).

const ARTIFACTS = resolve(dirname(fileURLToPath(import.meta.url)), '../../test-artifacts/console');
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

let fixture: ConsoleFixture;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const pageErrors: string[] = [];
async function open(query: string): Promise<void> {
  await page.goto(`${fixture.url}/?${query}`);
}

async function screenshot(name: string): Promise<void> {
  // Charts draw after their data arrives; wait until nothing is loading.
  await page.waitForFunction(() => document.querySelectorAll('.state--loading').length === 0);
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  fixture = await startConsoleFixture();
  browser = await launchChromium();
  context = await browser.newContext({ viewport: DESKTOP, acceptDownloads: true });
  page = await context.newPage();
  page.setDefaultTimeout(30_000);
  page.on('pageerror', (error) => pageErrors.push(error.message));
});

afterAll(async () => {
  await browser?.close();
  await fixture?.close();
});

describe('console against a real Governor', () => {
  it('serves the console at / and answers client routes with the app', async () => {
    const response = await page.goto(`${fixture.url}/some/client/route?view=sql`);
    expect(response?.status()).toBe(200);
    await page.waitForSelector('[data-testid="view-sql"]');
  });

  it('fleet overview: every pool with its four signals', async () => {
    await open('view=fleet&range=15m');
    await page.waitForSelector('[data-testid="fleet-table"] tbody tr');
    // Every pool of the demo fleet shows all four signals — TTFT, e2e, the utilization ratio with
    // its memory and compute parts, success per dollar — as numbers, none as "—".
    const rows = await page.$$eval('[data-testid="fleet-table"] tbody tr', (trs) =>
      trs.map((tr) => {
        const text = (selector: string) => tr.querySelector(selector)?.textContent?.trim() ?? '';
        return {
          pool: text('th button'),
          signals: {
            ttft: text('[data-col="ttft"]'),
            e2e: text('[data-col="e2e"]'),
            utilizationRatio: text('[data-col="utilization"] [data-part="ratio"]'),
            memory: text('[data-col="utilization"] [data-part="memory"]'),
            compute: text('[data-col="utilization"] [data-part="compute"]'),
            successPerDollar: text('[data-col="success-per-dollar"]'),
          },
        };
      }),
    );
    expect(rows.map((r) => r.pool).sort()).toEqual([...fixture.demoPools].sort());
    for (const { pool, signals } of rows) {
      for (const [signal, value] of Object.entries(signals)) {
        expect(value, `${pool} ${signal}`).toMatch(/^[0-9][0-9.,]*\s?(ms|s|%|k|M)?$/);
      }
    }
    await page.waitForSelector('[data-testid="fleet-kpis"]');
    for (const chart of ['chart-ttft', 'chart-e2e', 'chart-utilization', 'chart-spd']) {
      // One line per pool; attached, not visible: a flat line has an empty bounding box.
      await page.waitForFunction(
        ({ chart, pools }) =>
          document.querySelectorAll(`[data-testid="${chart}"] .recharts-line path.recharts-curve[d]`)
            .length === pools,
        { chart, pools: fixture.demoPools.length },
      );
    }
    await screenshot('fleet-overview');

    // Selecting a pool focuses the view and lands in the URL (shareable).
    await page.click('[data-testid="fleet-table"] button:text("llama70b-h100-east")');
    await page.waitForURL(/pool=llama70b-h100-east/);
    // A chart point links to the traces behind it (a point near the end, where there is data).
    const chart = page.locator('[data-testid="chart-ttft"] .recharts-wrapper');
    const box = (await chart.boundingBox())!;
    // As an operator does: hover until the tooltip shows the point, then click it.
    await chart.hover({ position: { x: box.width - 60, y: box.height / 2 } });
    await page.waitForSelector('[data-testid="chart-ttft"] .recharts-tooltip-wrapper .recharts-tooltip-item');
    await chart.click({ position: { x: box.width - 60, y: box.height / 2 } });
    await page.waitForURL(/view=traces.*tfrom=/);
    await page.waitForSelector('[data-testid="bucket-notice"]');
    await page.waitForSelector('[data-testid="trace-table"] tbody tr');
  });

  it('hop attribution: stacked latency by hop per pool and the bottleneck', async () => {
    await open('view=hops&range=15m');
    await page.waitForSelector('[data-testid="hops-by-pool"] .recharts-bar-rectangle');
    const bottlenecks = await page.textContent('[data-testid="bottlenecks"]');
    expect(bottlenecks).toMatch(/bottleneck/);
    await page.waitForSelector('[data-testid="hops-over-time"] .recharts-area', { state: 'attached' });
    await screenshot('hop-attribution');
  });

  it('traces: search by pool, open the waterfall, read a span, share the URL', async () => {
    await open('view=traces&range=15m');
    await page.fill('form[aria-label="Search traces"] label:has-text("Pool") input', 'llama70b-h100-east');
    await page.click('button:text("Search")');
    await page.waitForURL(/pool=llama70b-h100-east/);
    await page.waitForFunction(() => {
      const cells = [...document.querySelectorAll('[data-testid="trace-table"] tbody tr td:nth-child(3)')];
      return cells.length > 0 && cells.every((c) => c.textContent === 'llama70b-h100-east');
    });
    await page.click('[data-testid="trace-table"] tbody tr >> nth=0 >> a');
    await page.waitForSelector('[data-testid="waterfall"] .waterfall__row >> nth=2');
    // A real fleet's request: the gateway's HTTP server span, its GenAI client call, vLLM's llm_request.
    const names = await page.$$eval('.waterfall__label', (e) => e.map((n) => n.textContent));
    expect(names.length).toBeGreaterThanOrEqual(3);
    expect(names.some((n) => n?.includes('llm_request'))).toBe(true);
    await page.click('.waterfall__button >> nth=0');
    // The root is the gateway's HTTP server span (real shapes: no governor.* attributes).
    await page.waitForSelector('[data-testid="span-details"] dt:text("http.response.status_code")');
    await screenshot('traces-waterfall');

    // The URL alone reopens the same trace.
    const shared = page.url();
    await page.goto('about:blank');
    await page.goto(shared);
    await page.waitForSelector('[data-testid="waterfall"] .waterfall__row');
  });

  it('traces: an outcome filter narrows the list', async () => {
    await open('view=traces&range=15m&outcome=success');
    await page.waitForSelector('[data-testid="trace-table"] tbody tr');
    const outcomes = await page.$$eval('[data-testid="trace-table"] tbody .badge', (e) => [
      ...new Set(e.map((b) => b.textContent)),
    ]);
    expect(outcomes).toEqual(['success']);
  });

  it('tasks: success per dollar and cost per successful task by tenant and workflow', async () => {
    await open('view=tasks&range=15m');
    await page.waitForSelector('[data-testid="cost-table-tenant"] tbody tr');
    await page.waitForSelector('[data-testid="cost-table-workflow_type"] tbody tr');
    await page.waitForSelector('[data-testid="tasks-failed"] :is(table, [data-state="empty"])');
    await screenshot('tasks-cost');
  });

  it('recommendations: approve from the inbox, see it applied and audited', async () => {
    await open('view=recommendations');
    await page.click('button:text("Evaluate now")');
    await page.waitForSelector('[data-testid="recommendation"][data-state="proposed"]');
    await screenshot('recommendations-inbox');
    const card = page.locator('[data-testid="recommendation"][data-state="proposed"]').first();
    const id = await card.getAttribute('data-id');
    await card.locator('button:text("Approve")').click();
    await page.waitForSelector(`[data-id="${id}"][data-state="approved"]`);
    // Approved recommendations apply at the next control tick.
    await page.click('button:text("Evaluate now")');
    await page.waitForSelector(`[data-id="${id}"]`, { state: 'detached' });
    await page.click('[role="tab"]:text("Applied")');
    await page.waitForURL(/tab=applied/);
    await page.waitForSelector(`[data-id="${id}"][data-state="applied"]`);
    const audit = await page.textContent('[data-testid="audit-log"]');
    expect(audit).toMatch(/approved/);
    expect(audit).toMatch(/applied/);
    await screenshot('recommendations-applied');
  });

  it('alerts: firing alerts, deliveries to a real webhook, and a test notification', async () => {
    await open('view=alerts');
    await page.waitForSelector('[data-testid="alert-table"] tbody tr');
    expect(await page.textContent('[data-testid="alert-table"]')).toContain('ttft-slo');
    await page.click('[data-testid="alerts-receivers"] button:text("Send test")');
    await page.waitForSelector('[data-testid="alerts-receivers"] [role="status"]:text("delivered")');
    await page.waitForSelector('[data-testid="delivery-table"] tbody tr');
    expect(fixture.webhookBodies.length).toBeGreaterThan(0);
    await screenshot('alerts');
  });

  it('SQL console: highlighted editor, schema, results, chart, CSV and errors', async () => {
    await open('view=sql&range=15m');
    await page.waitForSelector('[data-testid="schema-browser"] summary:has-text("spans")');
    await page.waitForSelector('[data-testid="result-table"] tbody tr');
    const sql =
      'SELECT pool, count(*) AS requests, round(avg(e2e_ms), 1) AS mean_ms\nFROM requests\nWHERE pool IS NOT NULL AND start_ns >= $from_ns\nGROUP BY pool\nORDER BY pool';
    await page.fill('[data-testid="sql-input"]', sql);
    await page.click('button:text-is("Run")');
    await page.waitForFunction(() =>
      [...document.querySelectorAll('[data-testid="result-table"] thead th')].some((th) =>
        th.textContent?.startsWith('mean_ms'),
      ),
    );
    const rows = await page.$$eval('[data-testid="result-table"] tbody tr', (r) => r.length);
    expect(rows).toBe(3);
    expect(await page.locator('.sql-editor .tok-keyword').count()).toBeGreaterThan(4);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.click('button:text("Download CSV")'),
    ]);
    const csv = readFileSync((await download.path())!, 'utf8');
    const lines = csv.trim().split(/\r\n/);
    expect(lines[0]).toBe('pool,requests,mean_ms');
    expect(lines).toHaveLength(4);
    expect(download.suggestedFilename()).toMatch(/\.csv$/);

    await page.click('button:text("Chart")');
    await page.waitForSelector('[data-testid="sql-results"] .recharts-bar-rectangle');
    await screenshot('sql-console');

    await page.fill('[data-testid="sql-input"]', 'SELECT pool FROM spans\nWHERE nonsense_column = 1');
    await page.click('button:text-is("Run")');
    await page.waitForSelector('[data-testid="sql-error"]');
    expect(await page.textContent('[data-testid="sql-error"]')).toContain('nonsense_column');
    await screenshot('sql-console-error');
  });

  it('dashboards: the defaults are listed, a new file appears, panels render', async () => {
    await open('view=dashboards');
    await page.waitForSelector('[data-testid="dashboard-list"] a:has-text("Fleet overview")');
    await page.waitForSelector('[data-testid="dashboard-list"] a:has-text("Cost and success per dollar")');
    writeFileSync(
      join(fixture.dashboardsDir, 'e2e-latency.json'),
      JSON.stringify({
        title: 'E2E latency',
        description: 'written by the end-to-end test',
        panels: [
          {
            title: 'Slowest pools',
            query: {
              type: 'sql',
              sql: 'SELECT pool, max(e2e_ms) AS worst_ms FROM requests WHERE start_ns >= $from_ns GROUP BY pool ORDER BY worst_ms DESC',
            },
            chart: 'table',
            width: 'full',
          },
        ],
      }),
    );
    await page.reload();
    await page.click('[data-testid="dashboard-list"] a:has-text("E2E latency")');
    await page.waitForURL(/dashboard=e2e-latency/);
    await page.waitForSelector('[data-testid="dashboard-panel"] [data-testid="result-table"] tbody tr');
    await open('view=dashboards&dashboard=cost&range=15m');
    await page.waitForSelector('[data-testid="dashboard-panel"] [data-testid="stat-value"]');
    await page.waitForSelector('[data-testid="dashboard-panel"] .recharts-bar-rectangle');
    await screenshot('dashboard-cost');
  });

  it('is usable on a 390 px screen without sideways scrolling', async () => {
    await page.setViewportSize(PHONE);
    for (const [query, name, ready] of [
      ['view=fleet&range=15m', 'narrow-fleet', '[data-testid="fleet-table"] tbody tr'],
      ['view=recommendations&tab=applied', 'narrow-recommendations', '[data-testid="recommendation"]'],
      ['view=traces&range=15m', 'narrow-traces', '[data-testid="trace-table"] tbody tr'],
      ['view=sql&range=15m', 'narrow-sql', '[data-testid="result-table"] tbody tr'],
    ] as const) {
      await open(query);
      await page.waitForSelector(ready);
      await screenshot(name);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, name).toBeLessThanOrEqual(0);
    }
    await open('view=traces&range=15m');
    await page.click('[data-testid="trace-table"] tbody tr >> nth=0 >> a');
    await page.waitForSelector('[data-testid="waterfall"] .waterfall__row >> nth=2');
    await screenshot('narrow-waterfall');
    expect(
      await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth),
    ).toBeLessThanOrEqual(0);
    await page.setViewportSize(DESKTOP);
  });

  // After the views that read spans: this test moves the oldest spans to Parquet.
  it('storage: rows and disk per table, Parquet history, TTLs and the latest retention run', async () => {
    await open('view=storage');
    await page.waitForSelector('[data-testid="storage-table"] tr[data-table="span_store"]');
    expect(
      await page.textContent('[data-testid="retention-table"] tr[data-target="spans"] [data-col="ttl"]'),
    ).toContain('2 min');
    expect(
      await page.textContent(
        '[data-testid="retention-table"] tr[data-target="request_facts"] [data-col="ttl"]',
      ),
    ).toBe('forever');
    // The run at start found nothing to export, which leaves no record.
    await page.waitForSelector('[data-testid="storage-runs"] [data-state="empty"]');

    // What `governor retention run --url` asks for; auth is off here, so no admin token is needed.
    const report = (await (await fetch(`${fixture.url}/api/retention/run`, { method: 'POST' })).json()) as {
      targets: { target: string; status: string; rowsExported: number }[];
    };
    const spansRun = report.targets.find((t) => t.target === 'spans')!;
    expect(spansRun).toMatchObject({ status: 'ok' });
    expect(spansRun.rowsExported).toBeGreaterThan(0);

    await open('view=storage');
    await page.waitForSelector('[data-testid="retention-runs"] tr[data-target="spans"]');
    const storage = (await (await fetch(`${fixture.url}/api/storage`)).json()) as StorageResponse;
    const spanStore = storage.tables.find((t) => t.table === 'span_store')!;
    const spansExport = storage.exports.find((e) => e.target === 'spans')!;
    expect(spanStore.rows).toBeGreaterThan(0);
    expect(spansExport.files).toBeGreaterThan(0);
    // Exported rows left the live table but nothing was lost: `spans` reads both.
    const sql = (await (
      await fetch(`${fixture.url}/api/sql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ sql: 'SELECT count(*) FROM spans' }),
      })
    ).json()) as { rows: number[][] };
    expect(Number(sql.rows[0]![0])).toBe(spanStore.rows + spansRun.rowsExported);

    // The page shows the server's figures (a live refresh may land first; wait for the same text).
    const cellText = async (selector: string, expected: string) =>
      page.waitForFunction(
        ([sel, text]) => document.querySelector(sel)?.textContent?.includes(text) === true,
        [selector, expected] as const,
      );
    await cellText(
      '[data-testid="storage-table"] tr[data-table="span_store"] [data-col="rows"]',
      formatCount(spanStore.rows),
    );
    // Rows written since the last checkpoint take no blocks yet; the page says where they are.
    await cellText(
      '[data-testid="storage-table"] tr[data-table="span_store"] [data-col="bytes"]',
      spanStore.bytes === 0 ? 'in WAL' : formatBytes(spanStore.bytes),
    );
    const parquet = '[data-testid="retention-table"] tr[data-target="spans"] [data-col="parquet"]';
    await cellText(parquet, formatBytes(spansExport.bytes));
    await cellText(parquet, `${spansExport.files} file`);
    await cellText(
      '[data-testid="retention-table"] tr[data-target="spans"] [data-col="partitions"]',
      spansExport.oldestPartition!.replace('T', ' '),
    );
    const run = '[data-testid="retention-runs"] tr[data-target="spans"]';
    expect(await page.textContent(`${run} [data-col="result"]`)).toBe('exported');
    expect(await page.textContent(`${run} [data-col="rows-exported"]`)).toBe(
      `${formatCount(spansRun.rowsExported)} rows`,
    );
    expect(await page.textContent('[data-testid="storage-summary"]')).toMatch(
      /Next retention run\s*in \d+ (min|h|d)/,
    );
    await screenshot('storage');

    await page.setViewportSize(PHONE);
    await open('view=storage');
    await page.waitForSelector('[data-testid="retention-runs"] tr[data-target="spans"]');
    await screenshot('narrow-storage');
    expect(
      await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth),
    ).toBeLessThanOrEqual(0);
    // Every column fits: no table needs sideways scrolling inside its panel either.
    expect(
      await page.$$eval('[data-testid="view-storage"] .table-wrap', (wraps) =>
        wraps.map((w) => w.scrollWidth - w.clientWidth),
      ),
    ).toEqual([0, 0, 0]);
    await page.setViewportSize(DESKTOP);
  });

  it('is reachable from the keyboard', async () => {
    await open('view=fleet');
    await page.waitForSelector('[data-testid="view-fleet"]');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    let reached = false;
    for (let i = 0; i < 12 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = (await page.evaluate(() => document.activeElement?.textContent)) === 'SQL';
    }
    expect(reached).toBe(true);
    await page.keyboard.press('Enter');
    await page.waitForSelector('[data-testid="view-sql"]');
  });

  it('threw no uncaught errors in the page', () => {
    expect(pageErrors).toEqual([]);
  });
});
