import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DASHBOARD_ID_PATTERN, parseDashboard } from '../packages/conventions/src/index.ts';

// CI fails on a dashboard file the server would refuse: every dashboards/*.json must parse and
// match the Dashboard schema, and its name must be a valid id (the console links by file name).

const dir = dirname(fileURLToPath(import.meta.url));
const files = readdirSync(dir).filter((name) => name.endsWith('.json'));

describe('dashboards as code', () => {
  it('ships the default dashboards', () => {
    expect(files).toEqual(expect.arrayContaining(['fleet-overview.json', 'cost.json']));
  });

  it.each(files)('%s is a valid dashboard', (file) => {
    expect(file.slice(0, -'.json'.length)).toMatch(DASHBOARD_ID_PATTERN);
    const raw = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    const result = parseDashboard(raw);
    if (!result.ok) {
      throw new Error(`${file}:\n${result.issues.map((i) => `  ${i.path}: ${i.message}`).join('\n')}`);
    }
    for (const panel of result.dashboard.panels) {
      // SQL panels must take the selected range, or the time picker silently does nothing.
      if (panel.query.type === 'sql' && /start_ns|end_ns|time_ns/.test(panel.query.sql)) {
        expect(panel.query.sql, `${file}: "${panel.title}"`).toMatch(/\$from_ns/);
      }
    }
  });
});
