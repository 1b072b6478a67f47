import { useState } from 'react';
import type { TraceDetail } from '../../api/traces.ts';
import { buildSpanTree } from '../../lib/build-span-tree.ts';
import { formatDateTime, formatMs } from '../../lib/format.ts';
import { hopColor, hopLabel } from '../../lib/hops.ts';

const ERROR_OUTCOMES = new Set(['error', 'timeout', 'rejected', 'preempted', 'cancelled']);

/** One request's spans on a shared time axis, coloured by hop; a row opens its attributes and events. */
export function TraceWaterfall({ trace }: { trace: TraceDetail }) {
  const { rows, startMs, totalMs } = buildSpanTree(trace.spans);
  const [open, setOpen] = useState<string | null>(null);
  const hops = [...new Set(rows.map((r) => r.span.hop).filter((h): h is string => h !== null))];
  return (
    <div className="waterfall" data-testid="waterfall">
      <div className="waterfall__meta">
        <span>
          Started {formatDateTime(startMs)} · {formatMs(totalMs)} · {rows.length} spans
        </span>
        <ul className="legend-inline" aria-label="Hops">
          {hops.map((hop) => (
            <li key={hop}>
              <span className="swatch" style={{ background: hopColor(hop) }} />
              {hopLabel(hop)}
            </li>
          ))}
        </ul>
      </div>
      <div className="waterfall__scale" aria-hidden="true">
        {[0, 0.25, 0.5, 0.75, 1].map((f) => (
          <span key={f} style={{ left: `${f * 100}%` }}>
            {formatMs(totalMs * f)}
          </span>
        ))}
      </div>
      <ol className="waterfall__rows">
        {rows.map(({ span, depth, offsetMs }) => {
          const left = (offsetMs / totalMs) * 100;
          const width = Math.max((span.durationMs / totalMs) * 100, 0.4);
          const failed = span.statusCode === 2 || (span.outcome !== null && ERROR_OUTCOMES.has(span.outcome));
          const color = hopColor(span.hop);
          const isOpen = open === span.spanId;
          return (
            <li key={span.spanId} className={`waterfall__row ${isOpen ? 'is-open' : ''}`}>
              <button
                type="button"
                className="waterfall__button"
                aria-expanded={isOpen}
                onClick={() => setOpen(isOpen ? null : span.spanId)}
              >
                <span className="waterfall__name" style={{ paddingLeft: `${depth * 14}px` }}>
                  {failed ? (
                    <span className="dot dot--bad" title="failed" />
                  ) : (
                    <span className="dot" style={{ background: color }} />
                  )}
                  <span className="waterfall__label">{span.name}</span>
                  <span className="waterfall__service">{span.hop ? hopLabel(span.hop) : span.service}</span>
                </span>
                <span className="waterfall__track">
                  <span
                    className={`waterfall__bar ${failed ? 'is-failed' : ''}`}
                    style={{ left: `${left}%`, width: `${width}%`, background: color }}
                  />
                  {span.events.map((event, i) =>
                    event.timeMs === null ? null : (
                      <span
                        // biome-ignore lint/suspicious/noArrayIndexKey: events have no id; order is stable
                        key={i}
                        className="waterfall__event"
                        style={{ left: `${((event.timeMs - startMs) / totalMs) * 100}%` }}
                        title={event.name}
                      />
                    ),
                  )}
                  <span className="waterfall__duration" style={{ left: `${Math.min(left + width, 88)}%` }}>
                    {formatMs(span.durationMs)}
                  </span>
                </span>
              </button>
              {isOpen ? <SpanDetails span={span} traceStartMs={startMs} /> : null}
            </li>
          );
        })}
      </ol>
    </div>
  );
}

function SpanDetails({ span, traceStartMs }: { span: TraceDetail['spans'][number]; traceStartMs: number }) {
  const attributes = Object.entries(span.attributes).sort(([a], [b]) => a.localeCompare(b));
  return (
    <div className="span-details" data-testid="span-details">
      <dl className="kv">
        <dt>span</dt>
        <dd>
          <code>{span.spanId}</code>
        </dd>
        {span.service ? (
          <>
            <dt>service</dt>
            <dd>{span.service}</dd>
          </>
        ) : null}
        <dt>start</dt>
        <dd>+{formatMs(span.startMs - traceStartMs)}</dd>
        <dt>duration</dt>
        <dd>{formatMs(span.durationMs)}</dd>
        {span.outcome ? (
          <>
            <dt>outcome</dt>
            <dd>{span.outcome}</dd>
          </>
        ) : null}
        {span.statusMessage ? (
          <>
            <dt>status</dt>
            <dd>{span.statusMessage}</dd>
          </>
        ) : null}
      </dl>
      {attributes.length ? (
        <>
          <h4>Attributes</h4>
          <dl className="kv kv--mono">
            {attributes.map(([key, value]) => (
              <div key={key} className="kv__pair">
                <dt>{key}</dt>
                <dd>{typeof value === 'string' ? value : JSON.stringify(value)}</dd>
              </div>
            ))}
          </dl>
        </>
      ) : null}
      {span.events.length ? (
        <>
          <h4>Events</h4>
          <ul className="events">
            {span.events.map((event, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: events have no id; order is stable
              <li key={i}>
                <strong>{event.name}</strong>
                {event.timeMs !== null ? <span> at +{formatMs(event.timeMs - traceStartMs)}</span> : null}
                {Object.keys(event.attributes).length ? (
                  <code> {JSON.stringify(event.attributes)}</code>
                ) : null}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </div>
  );
}
