import { useEffect, useId, useRef, useState } from 'react';
import { type SqlResult, loadSchema, runSql } from '../../api/sql.ts';
import { Panel } from '../../components/Panel/index.ts';
import { ResultChart } from '../../components/ResultChart/index.ts';
import { ResultTable } from '../../components/ResultTable/index.ts';
import { SchemaBrowser } from '../../components/SchemaBrowser/index.ts';
import { SqlEditor, type SqlEditorHandle } from '../../components/SqlEditor/index.ts';
import { AsyncContent, EmptyState, LoadingState } from '../../components/StateView/index.ts';
import { ApiError } from '../../lib/api-client.ts';
import { findErrorLine } from '../../lib/highlight-sql.ts';
import { substituteRange } from '../../lib/substitute-range.ts';
import { useTimeRange } from '../../lib/time-context.tsx';
import { chooseStepMs } from '../../lib/time-range.ts';
import { toCsv, downloadText } from '../../lib/to-csv.ts';
import { useApi } from '../../lib/use-api.ts';
import { useUrlParams } from '../../lib/url-state.ts';

export const DEFAULT_SQL = `-- Requests and p95 latency per pool in the selected time range
-- (one row per request; its pool is the runtime's that served it)
SELECT pool,
       count(*) AS requests,
       quantile_cont(e2e_ms, 0.95) AS e2e_p95_ms,
       avg(CASE WHEN outcome = 'success' THEN 1 ELSE 0 END) AS success_rate
FROM requests
WHERE start_ns >= $from_ns AND start_ns < $to_ns
GROUP BY pool
ORDER BY requests DESC`;

type RunState =
  | { status: 'idle' }
  | { status: 'running'; sql: string }
  | { status: 'done'; sql: string; result: SqlResult }
  | { status: 'failed'; sql: string; error: Error };

const LIMITS = [100, 1000, 10_000];

export function SqlView() {
  const [params, setParams] = useUrlParams();
  const { range, pending } = useTimeRange();
  const [sql, setSql] = useState(params.sql ?? DEFAULT_SQL);
  const [limit, setLimit] = useState(1000);
  const [mode, setMode] = useState<'table' | 'chart'>(params.show === 'chart' ? 'chart' : 'table');
  const [run, setRun] = useState<RunState>({ status: 'idle' });
  const editorRef = useRef<SqlEditorHandle>(null);
  const abortRef = useRef<AbortController | null>(null);
  const errorId = useId();
  const schema = useApi('sql-schema', (signal) => loadSchema(signal), { live: false });

  async function execute(text = sql) {
    abortRef.current?.abort();
    const controller = new AbortController();
    abortRef.current = controller;
    const resolved = substituteRange(text, { ...range, stepMs: chooseStepMs(range.toMs - range.fromMs) });
    setRun({ status: 'running', sql: text });
    setParams({ sql: text === DEFAULT_SQL ? null : text }, { replace: true });
    try {
      const result = await runSql(resolved, { limit, signal: controller.signal });
      if (!controller.signal.aborted) setRun({ status: 'done', sql: text, result });
    } catch (error) {
      if ((error as Error).name === 'AbortError') return;
      setRun({ status: 'failed', sql: text, error: error as Error });
    }
  }

  // Opening the console runs its query (a shared URL's, or the default) once the time range is
  // known, so it shows data straight away.
  const ranOnOpen = useRef(false);
  // biome-ignore lint/correctness/useExhaustiveDependencies: run once, when the range resolves
  useEffect(() => {
    if (pending || ranOnOpen.current) return;
    ranOnOpen.current = true;
    void execute(params.sql ?? DEFAULT_SQL);
  }, [pending]);
  useEffect(() => () => abortRef.current?.abort(), []);

  const errorLine = run.status === 'failed' ? findErrorLine(run.error.message) : null;

  return (
    <div className="view sql-view" data-testid="view-sql">
      <aside className="sql-view__schema" aria-label="Schema">
        <Panel title="Schema" subtitle="documented views (docs/sql.md)">
          <AsyncContent
            state={schema}
            isEmpty={(d) => d.length === 0}
            empty={<EmptyState title="No views found" />}
          >
            {(columns) => (
              <SchemaBrowser
                columns={columns}
                onInsert={(text) => editorRef.current?.insertAtCursor(text)}
                onQueryView={(view) => {
                  const next = `SELECT *\nFROM ${view}\nLIMIT 100`;
                  setSql(next);
                  void execute(next);
                }}
              />
            )}
          </AsyncContent>
        </Panel>
      </aside>
      <div className="sql-view__main">
        <section className="panel" aria-label="Query">
          <div className="panel__body">
            <SqlEditor
              ref={editorRef}
              value={sql}
              onChange={setSql}
              onRun={() => execute()}
              errorLine={errorLine}
              describedBy={run.status === 'failed' ? errorId : undefined}
            />
            {run.status === 'failed' ? (
              <div className="sql-error" id={errorId} role="alert" data-testid="sql-error">
                <strong>{run.error instanceof ApiError ? run.error.code : 'Error'}</strong>
                <pre>{run.error.message}</pre>
              </div>
            ) : null}
            <div className="toolbar">
              <button
                type="button"
                className="button button--primary"
                onClick={() => execute()}
                disabled={run.status === 'running'}
              >
                {run.status === 'running' ? 'Running…' : 'Run'}
              </button>
              <span className="muted toolbar__hint">
                Ctrl+Enter · $from_ns, $to_ns and $step_s follow the time range
              </span>
              <label className="field field--inline">
                <span className="field__label">Row limit</span>
                <select className="select" value={limit} onChange={(e) => setLimit(Number(e.target.value))}>
                  {LIMITS.map((l) => (
                    <option key={l} value={l}>
                      {l.toLocaleString()}
                    </option>
                  ))}
                </select>
              </label>
            </div>
          </div>
        </section>
        <Results
          run={run}
          mode={mode}
          onMode={(m) => {
            setMode(m);
            setParams({ show: m === 'chart' ? 'chart' : null }, { replace: true });
          }}
        />
      </div>
    </div>
  );
}

function Results({
  run,
  mode,
  onMode,
}: {
  run: RunState;
  mode: 'table' | 'chart';
  onMode: (mode: 'table' | 'chart') => void;
}) {
  if (run.status === 'idle') {
    return (
      <EmptyState title="Run a query to see results">
        Only SELECT and EXPLAIN; results are capped by the row limit.
      </EmptyState>
    );
  }
  if (run.status === 'running') return <LoadingState label="Running query…" />;
  if (run.status === 'failed') return null;
  const { result } = run;
  return (
    <Panel
      title="Results"
      subtitle={
        <span data-testid="result-summary">
          {result.rows.length.toLocaleString()} rows{result.truncated ? ' (truncated at the limit)' : ''} ·{' '}
          {result.elapsedMs.toFixed(1)} ms
        </span>
      }
      testId="sql-results"
      actions={
        <>
          <fieldset className="segmented segmented--small">
            <legend className="visually-hidden">Show results as</legend>
            {(['table', 'chart'] as const).map((m) => (
              <button
                key={m}
                type="button"
                className={`segmented__option ${mode === m ? 'is-active' : ''}`}
                aria-pressed={mode === m}
                onClick={() => onMode(m)}
              >
                {m === 'table' ? 'Table' : 'Chart'}
              </button>
            ))}
          </fieldset>
          <button
            type="button"
            className="button button--small"
            disabled={result.columns.length === 0}
            onClick={() =>
              downloadText(
                `governor-query-${new Date().toISOString().replace(/[:.]/g, '-')}.csv`,
                toCsv(
                  result.columns.map((c) => c.name),
                  result.rows,
                ),
              )
            }
          >
            Download CSV
          </button>
        </>
      }
    >
      {result.rows.length === 0 ? (
        <EmptyState title="The query returned no rows" />
      ) : mode === 'table' ? (
        <ResultTable result={result} />
      ) : (
        <ResultChart result={result} title="Query result chart" />
      )}
    </Panel>
  );
}
