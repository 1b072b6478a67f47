import { z } from 'zod';

// Dashboards as code: one JSON file per dashboard in the dashboards folder. The file
// name without `.json` is the dashboard's id. The server validates every file against `Dashboard`
// at request time; a test validates the shipped ones so CI fails on a bad file.
//
// SQL panels run through the read-only gate (POST /api/sql). The console replaces `$from_ns`,
// `$to_ns` (event-time nanoseconds, BIGINT literals) and `$step_s` (bucket width in seconds) with
// the selected time range before it sends the query.

export const DASHBOARD_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,63}$/;

export const CHART_TYPES = ['line', 'area', 'bar', 'stacked-bar', 'table', 'stat'] as const;
export type ChartType = (typeof CHART_TYPES)[number];

export const SqlPanelQuery = z
  .object({
    type: z.literal('sql'),
    sql: z.string().min(1),
    /** Row cap sent to /api/sql. */
    limit: z.number().int().positive().max(10_000).optional(),
  })
  .strict();
export type SqlPanelQuery = z.infer<typeof SqlPanelQuery>;

export const SignalPanelQuery = z
  .object({
    type: z.literal('signal'),
    /** A series of GET /api/signals/series, e.g. `ttftMs.p95`, `utilizationRatio`, `successPerDollar`. */
    signal: z
      .string()
      .regex(/^[A-Za-z][A-Za-z0-9]*(\.[A-Za-z0-9]+)*$/, 'expected a signal path such as ttftMs.p95'),
    /** Grouping, e.g. `pool` or `pool,model`. */
    by: z
      .string()
      .regex(/^[a-z_]+(,[a-z_]+)*$/, 'expected dimensions such as pool or pool,model')
      .optional(),
    /** Bucket width, e.g. `1m`; default: chosen from the time range. */
    step: z
      .string()
      .regex(/^(\d+(ms|s|m|h|d))+$/, 'expected a duration such as 30s or 1m')
      .optional(),
  })
  .strict();
export type SignalPanelQuery = z.infer<typeof SignalPanelQuery>;

export const PanelQuery = z.discriminatedUnion('type', [SqlPanelQuery, SignalPanelQuery]);
export type PanelQuery = z.infer<typeof PanelQuery>;

export const PanelOptions = z
  .object({
    /** Column on the x axis (SQL panels); default: the first column. */
    x: z.string().optional(),
    /** Columns plotted as values (SQL panels); default: every numeric column after x. */
    y: z.array(z.string()).optional(),
    /** Column whose values split the rows into series (long format), e.g. `pool`. */
    series: z.string().optional(),
    /** Shown after values, e.g. `ms`, `$`, `%`. */
    unit: z.string().max(16).optional(),
    /** Horizontal reference line, e.g. an SLO. */
    threshold: z.number().optional(),
    thresholdLabel: z.string().max(40).optional(),
    /** Decimal places for values. */
    decimals: z.number().int().min(0).max(6).optional(),
  })
  .strict();
export type PanelOptions = z.infer<typeof PanelOptions>;

export const DashboardPanel = z
  .object({
    title: z.string().min(1).max(120),
    description: z.string().max(500).optional(),
    query: PanelQuery,
    chart: z.enum(CHART_TYPES),
    options: PanelOptions.optional(),
    /** Share of the row the panel takes; panels wrap onto new rows. */
    width: z.enum(['full', 'half', 'third']).default('half'),
  })
  .strict();
export type DashboardPanel = z.infer<typeof DashboardPanel>;

export const Dashboard = z
  .object({
    /** Optional JSON Schema pointer for editors; ignored by Governor. */
    $schema: z.string().optional(),
    title: z.string().min(1).max(120),
    description: z.string().max(1000).optional(),
    tags: z.array(z.string().min(1).max(40)).max(20).default([]),
    /** Default time range when the dashboard opens without one in the URL, e.g. `1h`. */
    defaultRange: z
      .string()
      .regex(/^(\d+(ms|s|m|h|d))+$/, 'expected a duration such as 15m or 1h')
      .optional(),
    panels: z.array(DashboardPanel).min(1).max(50),
  })
  .strict();
export type Dashboard = z.infer<typeof Dashboard>;

/** Where the server looks for dashboard files; `dir` null means the repository's `dashboards/`. */
export const DashboardsConfig = z
  .object({
    dir: z
      .string()
      .min(1)
      .nullable()
      .default(null)
      .describe(
        "Folder of dashboard JSON files served at /api/dashboards; null uses the repository's dashboards/ folder.",
      ),
  })
  .strict()
  .describe('Dashboards as code: one JSON file per dashboard.');
export type DashboardsConfig = z.infer<typeof DashboardsConfig>;

/** One entry of GET /api/dashboards. A file that fails validation is listed with its issues. */
export interface DashboardSummary {
  id: string;
  title: string;
  description: string | null;
  tags: string[];
  panelCount: number;
}

export interface DashboardFileIssue {
  file: string;
  issues: { path: string; message: string }[];
}

/** Response of GET /api/dashboards. */
export interface DashboardList {
  dir: string;
  dashboards: DashboardSummary[];
  invalid: DashboardFileIssue[];
}

/** Response of GET /api/dashboards/:id. */
export type DashboardWithId = Dashboard & { id: string };

/** Validates a parsed dashboard file; issues carry dotted paths such as `panels.0.chart`. */
export function parseDashboard(
  raw: unknown,
): { ok: true; dashboard: Dashboard } | { ok: false; issues: { path: string; message: string }[] } {
  const result = Dashboard.safeParse(raw);
  if (result.success) return { ok: true, dashboard: result.data };
  return {
    ok: false,
    issues: result.error.issues.map((issue) => ({
      path: issue.path.map(String).join('.') || '(root)',
      message: issue.message,
    })),
  };
}
