import { OUTCOMES_FOR_FILTER } from '../../lib/outcomes.ts';
import { type FormEvent, useEffect, useState } from 'react';
import { type TraceSummary, fetchTrace, searchTraces } from '../../api/traces.ts';
import { OutcomeBadge } from '../../components/OutcomeBadge/index.ts';
import { Panel } from '../../components/Panel/index.ts';
import { AsyncContent, EmptyState } from '../../components/StateView/index.ts';
import { TableHead } from '../../components/TableHead/index.ts';
import { TraceWaterfall } from '../../components/TraceWaterfall/index.ts';
import { formatDateTime, formatMs } from '../../lib/format.ts';
import { useTimeRange } from '../../lib/time-context.tsx';
import { formatClock } from '../../lib/time-range.ts';
import { useApi } from '../../lib/use-api.ts';
import { hrefFor, navigateTo, useUrlParams } from '../../lib/url-state.ts';

// URL parameters: pool (shared), model, tenant, outcome, minMs, maxMs; tfrom/tto narrow the search
// to a chart bucket without changing the console's range; traceId opens the waterfall.

const PAGE_SIZE = 50;

export function TracesView() {
  const [params, setParams] = useUrlParams();
  const { range, refreshOptions, pending } = useTimeRange();
  const bucketFrom = params.tfrom ? Date.parse(params.tfrom) : Number.NaN;
  const bucketTo = params.tto ? Date.parse(params.tto) : Number.NaN;
  const hasBucket = Number.isFinite(bucketFrom) && Number.isFinite(bucketTo) && bucketTo > bucketFrom;
  const searchWindow = hasBucket ? { fromMs: bucketFrom, toMs: bucketTo } : range;
  const filters = {
    fromMs: searchWindow.fromMs,
    toMs: searchWindow.toMs,
    pool: params.pool ?? null,
    model: params.model ?? null,
    tenant: params.tenant ?? null,
    outcome: params.outcome ?? null,
    minDurationMs: params.minMs ? Number(params.minMs) : null,
    maxDurationMs: params.maxMs ? Number(params.maxMs) : null,
  };
  const key = pending
    ? null
    : JSON.stringify([
        hasBucket ? [bucketFrom, bucketTo] : [range.key, range.key === 'custom' ? range : null],
        filters.pool,
        filters.model,
        filters.tenant,
        filters.outcome,
        filters.minDurationMs,
        filters.maxDurationMs,
      ]);
  const [limit, setLimit] = useState(PAGE_SIZE);
  // More rows refresh the same list (no loading flash); new filters start a new one.
  const liveOptions = hasBucket ? { live: false, refreshOn: [] as unknown[] } : refreshOptions;
  const results = useApi(key, (signal) => searchTraces({ ...filters, limit }, signal), {
    live: liveOptions.live,
    refreshOn: [...liveOptions.refreshOn, limit],
  });
  const traceId = params.traceId ?? null;

  return (
    <div className="view" data-testid="view-traces">
      <TraceSearchForm params={params} onSubmit={(patch) => setParams({ ...patch, traceId: null })} />
      {hasBucket ? (
        <p className="notice" data-testid="bucket-notice">
          Showing traces from {formatClock(bucketFrom)} to {formatClock(bucketTo)} (the chart point you
          clicked).{' '}
          <a href={hrefFor({ tfrom: null, tto: null })}>Use the whole range ({range.label.toLowerCase()})</a>
        </p>
      ) : null}
      {traceId ? <TraceDetailPanel traceId={traceId} /> : null}
      <Panel
        title="Traces"
        subtitle={
          results.data
            ? `${results.data.traces.length}${results.data.truncated ? '+' : ''} newest first`
            : undefined
        }
        testId="trace-results"
      >
        <AsyncContent
          state={results}
          isEmpty={(d) => d.traces.length === 0}
          empty={<EmptyState title="No traces match">Widen the time range or clear a filter.</EmptyState>}
        >
          {(data) => (
            <>
              <TraceTable traces={data.traces} selected={traceId} />
              {data.truncated || data.traces.length >= limit ? (
                <button
                  type="button"
                  className="button button--small show-more"
                  onClick={() => setLimit((l) => l + PAGE_SIZE)}
                >
                  Show {PAGE_SIZE} more
                </button>
              ) : null}
            </>
          )}
        </AsyncContent>
      </Panel>
    </div>
  );
}

function TraceSearchForm({
  params,
  onSubmit,
}: {
  params: Readonly<Record<string, string>>;
  onSubmit: (patch: Record<string, string | null>) => void;
}) {
  const [draft, setDraft] = useState(() => readDraft(params));
  // biome-ignore lint/correctness/useExhaustiveDependencies: re-sync only when the URL's filters change
  useEffect(
    () => setDraft(readDraft(params)),
    [params.pool, params.model, params.tenant, params.outcome, params.minMs, params.maxMs],
  );
  const set = (name: keyof typeof draft) => (e: { target: { value: string } }) =>
    setDraft((d) => ({ ...d, [name]: e.target.value }));
  function submit(event: FormEvent) {
    event.preventDefault();
    const clean = (v: string) => (v.trim() === '' ? null : v.trim());
    onSubmit({
      pool: clean(draft.pool),
      model: clean(draft.model),
      tenant: clean(draft.tenant),
      outcome: clean(draft.outcome),
      minMs: clean(draft.minMs),
      maxMs: clean(draft.maxMs),
    });
  }
  return (
    <form className="search-form" onSubmit={submit} aria-label="Search traces">
      <label className="field">
        <span className="field__label">Model</span>
        <input className="input" value={draft.model} onChange={set('model')} placeholder="any" />
      </label>
      <label className="field">
        <span className="field__label">Pool</span>
        <input className="input" value={draft.pool} onChange={set('pool')} placeholder="any" />
      </label>
      <label className="field">
        <span className="field__label">Tenant</span>
        <input className="input" value={draft.tenant} onChange={set('tenant')} placeholder="any" />
      </label>
      <label className="field">
        <span className="field__label">Outcome</span>
        <select className="select" value={draft.outcome} onChange={set('outcome')}>
          <option value="">any</option>
          {OUTCOMES_FOR_FILTER.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      </label>
      <label className="field field--narrow">
        <span className="field__label">Min ms</span>
        <input className="input" type="number" min="0" value={draft.minMs} onChange={set('minMs')} />
      </label>
      <label className="field field--narrow">
        <span className="field__label">Max ms</span>
        <input className="input" type="number" min="0" value={draft.maxMs} onChange={set('maxMs')} />
      </label>
      <button type="submit" className="button">
        Search
      </button>
    </form>
  );
}

function readDraft(params: Readonly<Record<string, string>>) {
  return {
    pool: params.pool ?? '',
    model: params.model ?? '',
    tenant: params.tenant ?? '',
    outcome: params.outcome ?? '',
    minMs: params.minMs ?? '',
    maxMs: params.maxMs ?? '',
  };
}

function TraceTable({ traces, selected }: { traces: TraceSummary[]; selected: string | null }) {
  return (
    <div className="table-wrap">
      <table className="table" data-testid="trace-table">
        <TableHead
          columns={[
            'Start',
            'Trace',
            'Pool',
            { label: 'Model', hideNarrow: true },
            { label: 'Tenant', hideNarrow: true },
            'Outcome',
            { label: 'TTFT', numeric: true, hideNarrow: true },
            { label: 'Duration', numeric: true },
            { label: 'Spans', numeric: true, hideNarrow: true },
          ]}
        />
        <tbody>
          {[...traces]
            .sort((a, b) => b.startMs - a.startMs)
            .map((t) => (
              <tr key={t.traceId} className={t.traceId === selected ? 'is-selected' : undefined}>
                <td className="nowrap">{formatDateTime(t.startMs)}</td>
                <td>
                  <a
                    href={hrefFor({ traceId: t.traceId })}
                    onClick={(event) => {
                      if (event.metaKey || event.ctrlKey || event.shiftKey) return;
                      event.preventDefault();
                      navigateTo({ traceId: t.traceId });
                      window.scrollTo({ top: 0 });
                    }}
                    className="mono"
                    title={`${t.traceId}${t.name ? ` · ${t.name}` : ''}`}
                  >
                    {t.traceId.slice(0, 12)}…
                  </a>
                </td>
                <td className="nowrap">{t.pool ?? '—'}</td>
                <td className="hide-narrow">{t.model ?? '—'}</td>
                <td className="nowrap hide-narrow">{t.tenant ?? '—'}</td>
                <td>
                  <OutcomeBadge outcome={t.outcome} />
                </td>
                <td className="num hide-narrow">{formatMs(t.ttftMs)}</td>
                <td className="num">{formatMs(t.durationMs)}</td>
                <td className="num hide-narrow">{t.spanCount ?? '—'}</td>
              </tr>
            ))}
        </tbody>
      </table>
    </div>
  );
}

function TraceDetailPanel({ traceId }: { traceId: string }) {
  const trace = useApi(`trace ${traceId}`, (signal) => fetchTrace(traceId, signal), { live: false });
  return (
    <Panel
      title="Trace waterfall"
      subtitle={<code>{traceId}</code>}
      testId="trace-detail"
      actions={
        <a className="small-link" href={hrefFor({ traceId: null })}>
          Close
        </a>
      }
    >
      <AsyncContent state={trace} isEmpty={(d) => d.spans.length === 0}>
        {(data) => <TraceWaterfall trace={data} />}
      </AsyncContent>
    </Panel>
  );
}
