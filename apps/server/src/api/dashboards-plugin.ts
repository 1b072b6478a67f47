import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DASHBOARD_ID_PATTERN,
  type DashboardFileIssue,
  type DashboardList,
  type DashboardSummary,
  type DashboardWithId,
  parseDashboard,
} from '@governor/conventions';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { useZodSchemas } from './zod-validation.ts';
import { ERROR_RESPONSES, openObject } from './http-schemas.ts';
import { GovernorError } from '../errors.ts';

// GET /api/dashboards[/:id]: dashboards as code. The folder is read at request time, so adding a
// file adds a dashboard without a restart. A file that fails the schema is reported, not hidden.

/** The repository's own `dashboards/` folder (apps/server/src/api → ../../../../dashboards). */
export const DEFAULT_DASHBOARDS_DIR = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '../../../../dashboards',
);

export interface DashboardsOptions {
  /** Folder of `*.json` files; null means the repository's `dashboards/`. */
  dir: string | null;
}

type LoadedFile =
  | { id: string; file: string; ok: true; dashboard: DashboardWithId }
  | { id: string; file: string; ok: false; issues: DashboardFileIssue['issues'] };

const DashboardListBody = openObject({
  dir: z.string().describe('The folder the dashboards are read from'),
  dashboards: z.array(
    openObject({
      id: z.string(),
      title: z.string(),
      description: z.string().nullable(),
      tags: z.array(z.string()),
      panelCount: z.number(),
    }),
  ),
  invalid: z
    .array(
      openObject({
        file: z.string(),
        issues: z.array(openObject({ path: z.string(), message: z.string() })),
      }),
    )
    .describe('Files that fail the dashboard schema, with why'),
}).meta({ id: 'DashboardList' });

const DashboardBody = openObject({
  id: z.string(),
  title: z.string(),
  panels: z.array(z.looseObject({})).describe('Panels: a signal query or SQL, and how to chart it'),
}).meta({ id: 'Dashboard' });

export async function dashboardsPlugin(app: FastifyInstance, options: DashboardsOptions): Promise<void> {
  useZodSchemas(app);
  const dir = resolve(options.dir ?? DEFAULT_DASHBOARDS_DIR);

  app.get(
    '/api/dashboards',
    {
      schema: {
        summary: 'Dashboards as code: the JSON files of the dashboards folder',
        tags: ['system'],
        response: { 200: DashboardListBody, ...ERROR_RESPONSES },
      },
    },
    async (): Promise<DashboardList> => {
      const files = await listDashboardFiles(dir);
      const loaded = await Promise.all(files.map((file) => loadDashboardFile(dir, file)));
      const dashboards: DashboardSummary[] = [];
      const invalid: DashboardFileIssue[] = [];
      for (const entry of loaded) {
        if (entry.ok) {
          dashboards.push({
            id: entry.id,
            title: entry.dashboard.title,
            description: entry.dashboard.description ?? null,
            tags: entry.dashboard.tags,
            panelCount: entry.dashboard.panels.length,
          });
        } else {
          invalid.push({ file: entry.file, issues: entry.issues });
        }
      }
      dashboards.sort((a, b) => a.title.localeCompare(b.title));
      return { dir, dashboards, invalid };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/dashboards/:id',
    {
      schema: {
        summary: 'One dashboard',
        tags: ['system'],
        params: z.object({ id: z.string().describe('File name without .json, e.g. fleet-overview') }),
        response: { 200: DashboardBody, ...ERROR_RESPONSES },
      },
    },
    async (request): Promise<DashboardWithId> => {
      const { id } = request.params;
      if (!DASHBOARD_ID_PATTERN.test(id)) {
        throw new GovernorError(
          'GOV_ERR_NOT_FOUND',
          `no dashboard "${id}"; ids are file names such as fleet-overview`,
        );
      }
      const files = await listDashboardFiles(dir);
      const file = `${id}.json`;
      if (!files.includes(file)) {
        throw new GovernorError(
          'GOV_ERR_NOT_FOUND',
          `no dashboard "${id}": ${join(dir, file)} does not exist`,
        );
      }
      const entry = await loadDashboardFile(dir, file);
      if (!entry.ok) {
        const detail = entry.issues.map((i) => `${i.path}: ${i.message}`).join('; ');
        throw new GovernorError('GOV_ERR_DASHBOARD_INVALID', `${file} is not a valid dashboard: ${detail}`);
      }
      return entry.dashboard;
    },
  );
}

async function listDashboardFiles(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return names
    .filter((name) => name.endsWith('.json') && DASHBOARD_ID_PATTERN.test(name.slice(0, -5)))
    .sort();
}

async function loadDashboardFile(dir: string, file: string): Promise<LoadedFile> {
  const id = file.slice(0, -'.json'.length);
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(join(dir, file), 'utf8'));
  } catch (error) {
    return {
      id,
      file,
      ok: false,
      issues: [{ path: '(file)', message: `not valid JSON: ${(error as Error).message}` }],
    };
  }
  const parsed = parseDashboard(raw);
  if (!parsed.ok) return { id, file, ok: false, issues: parsed.issues };
  return { id, file, ok: true, dashboard: { id, ...parsed.dashboard } };
}
