import type { Evidence, Recommendation } from '@governor/conventions';
import { useState } from 'react';
import { type RecommendationDecision, describeAction, describeTarget } from '../../api/control.ts';
import { fetchSeries } from '../../api/signals.ts';
import { parseEvidenceSignal, unitForSignal } from '../../lib/evidence.ts';
import { formatDateTime, formatPercent, formatWithUnit } from '../../lib/format.ts';
import { chooseStepMs } from '../../lib/time-range.ts';
import { useApi } from '../../lib/use-api.ts';
import { parseDurationMsSafe } from '../../lib/parse-duration.ts';
import { AsyncContent, EmptyState } from '../StateView/index.ts';
import { TableHead } from '../TableHead/index.ts';
import { TimeSeriesChart } from '../TimeSeriesChart/index.ts';

const STATE_LABELS: Record<string, string> = {
  proposed: 'Proposed',
  approved: 'Approved',
  applied: 'Applied',
  rejected: 'Rejected',
  expired: 'Expired',
  verified: 'Verified',
  rolled_back: 'Rolled back',
};

export interface RecommendationCardProps {
  recommendation: Recommendation;
  onDecide?: (id: string, decision: RecommendationDecision) => Promise<void>;
  /** Show the first chartable evidence as a chart (the inbox does for open items). */
  showEvidenceChart?: boolean;
}

/** One recommendation: what, why (evidence), how sure, and the two-click decision. */
export function RecommendationCard({
  recommendation: rec,
  onDecide,
  showEvidenceChart = false,
}: RecommendationCardProps) {
  const [busy, setBusy] = useState<RecommendationDecision | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [chartOpen, setChartOpen] = useState(showEvidenceChart);
  const chartable = rec.evidence.find((e) => parseEvidenceSignal(e.signal).chartable) ?? null;
  const decisions: RecommendationDecision[] =
    rec.state === 'proposed'
      ? ['approve', 'apply', 'reject']
      : rec.state === 'approved'
        ? ['apply', 'reject']
        : [];

  async function decide(decision: RecommendationDecision) {
    if (!onDecide) return;
    setBusy(decision);
    setError(null);
    try {
      await onDecide(rec.id, decision);
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(null);
    }
  }

  return (
    <article
      className={`rec-card rec-card--${rec.state}`}
      data-testid="recommendation"
      data-id={rec.id}
      data-state={rec.state}
    >
      <header className="rec-card__header">
        <span className="badge badge--kind">{rec.kind.replace('_', ' ')}</span>
        <span className="rec-card__target">{describeTarget(rec.target as Record<string, string>)}</span>
        <span className={`badge badge--rec-${rec.state}`} data-testid="recommendation-state">
          {STATE_LABELS[rec.state] ?? rec.state}
        </span>
      </header>
      <p className="rec-card__action">{describeAction(rec.kind, rec.action)}</p>
      <p className="rec-card__reason">{rec.reason}</p>
      <dl className="rec-card__facts">
        <div>
          <dt>Confidence</dt>
          <dd>
            <span className="meter" aria-hidden="true">
              <span style={{ width: `${Math.round(rec.confidence * 100)}%` }} />
            </span>
            {formatPercent(rec.confidence, 0)}
          </dd>
        </div>
        {Object.keys(rec.expectedImpact ?? {}).length ? (
          <div className="rec-card__fact--wide">
            <dt>Expected impact</dt>
            <dd className="rec-card__impact">
              {describeImpact(rec.expectedImpact).map((line) => (
                <span key={line}>{line}</span>
              ))}
            </dd>
          </div>
        ) : null}
        <div>
          <dt>Policy</dt>
          <dd>{rec.policy ?? 'manual'}</dd>
        </div>
        <div>
          <dt>Proposed</dt>
          <dd>{formatDateTime(rec.createdAt)}</dd>
        </div>
        {rec.appliedAt ? (
          <div>
            <dt>Applied</dt>
            <dd>{formatDateTime(rec.appliedAt)}</dd>
          </div>
        ) : null}
        {rec.verifiedAt ? (
          <div>
            <dt>{rec.state === 'rolled_back' ? 'Rolled back' : 'Verified'}</dt>
            <dd>{formatDateTime(rec.verifiedAt)}</dd>
          </div>
        ) : null}
      </dl>
      {gateOf(rec) && (rec.state === 'proposed' || rec.state === 'approved') ? (
        <p className="rec-card__gate">{gateOf(rec)}</p>
      ) : null}
      {rec.hold && (rec.state === 'proposed' || rec.state === 'approved') ? (
        <p className="rec-card__gate" data-testid="rec-hold">
          Held by a guard ({rec.hold.rule.replaceAll('_', ' ')}): {rec.hold.why}
        </p>
      ) : null}
      {rec.evidence.length ? <EvidenceList evidence={rec.evidence} /> : null}
      {chartable ? (
        chartOpen ? (
          <EvidenceChart evidence={chartable} target={rec.target} aroundIso={rec.createdAt} />
        ) : (
          <button
            type="button"
            className="button button--ghost button--small"
            onClick={() => setChartOpen(true)}
          >
            Show evidence chart
          </button>
        )
      ) : null}
      {decisions.length && onDecide ? (
        <footer className="rec-card__actions">
          {decisions.map((d) => (
            <button
              key={d}
              type="button"
              className={`button ${d === 'reject' ? 'button--ghost' : d === 'apply' ? 'button--primary' : ''}`}
              disabled={busy !== null}
              onClick={() => decide(d)}
            >
              {busy === d ? `${labelFor(d)}…` : labelFor(d)}
            </button>
          ))}
        </footer>
      ) : null}
      {error ? (
        <p className="inline-error" role="alert">
          {error}
        </p>
      ) : null}
    </article>
  );
}

/** Why the policy gate did not auto-apply it (the server's `gate`, when it sends one). */
function gateOf(rec: Recommendation): string | null {
  const gate = (rec as Recommendation & { gate?: unknown }).gate;
  return typeof gate === 'string' && gate !== '' ? gate : null;
}

function labelFor(decision: RecommendationDecision): string {
  return decision === 'approve' ? 'Approve' : decision === 'apply' ? 'Apply now' : 'Reject';
}

/** `{summary, errorRate: {from, to}, weight: {pool, from, to}}` → readable lines. */
export function describeImpact(impact: Record<string, unknown>): string[] {
  const lines: string[] = [];
  if (typeof impact.summary === 'string') lines.push(impact.summary);
  for (const [key, value] of Object.entries(impact)) {
    if (key === 'summary') continue;
    if (value && typeof value === 'object' && 'from' in value && 'to' in value) {
      const v = value as { from: unknown; to: unknown; pool?: unknown };
      lines.push(
        `${key}${v.pool ? ` (${v.pool})` : ''}: ${formatImpactValue(v.from)} → ${formatImpactValue(v.to)}`,
      );
    } else {
      lines.push(`${key}: ${formatImpactValue(value)}`);
    }
  }
  return lines;
}

function formatImpactValue(value: unknown): string {
  if (typeof value === 'number') return String(Number(value.toPrecision(3)));
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

function EvidenceList({ evidence }: { evidence: Evidence[] }) {
  return (
    <div className="table-wrap">
      <table className="table table--compact evidence">
        <caption className="visually-hidden">Evidence</caption>
        <TableHead
          columns={[
            'Evidence',
            { label: 'Value', numeric: true },
            { label: 'Threshold', numeric: true },
            'Window',
          ]}
        />
        <tbody>
          {evidence.map((e) => {
            const parsed = parseEvidenceSignal(e.signal);
            const unit = unitForSignal(parsed.signal);
            const selector = /\{(.*)\}$/.exec(e.signal)?.[1];
            return (
              <tr key={`${e.signal}-${e.window}`}>
                <td>
                  <span className="mono">{parsed.signal}</span>
                  {selector ? <div className="cell-sub">{selector}</div> : null}
                </td>
                <td className="num">{formatWithUnit(e.value, unit)}</td>
                <td className="num">{formatWithUnit(e.threshold, unit)}</td>
                <td>{e.window}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function EvidenceChart({
  evidence,
  target,
  aroundIso,
}: {
  evidence: Evidence;
  target: Recommendation['target'];
  aroundIso: string;
}) {
  const parsed = parseEvidenceSignal(evidence.signal);
  const pool = parsed.labels.pool ?? target.pool ?? null;
  const at = Date.parse(aroundIso);
  const windowMs = parseDurationMsSafe(evidence.window) ?? 5 * 60_000;
  const fromMs = at - Math.max(30 * 60_000, windowMs * 6);
  const toMs = at + 10 * 60_000;
  const step = chooseStepMs(toMs - fromMs, 40);
  const unit = unitForSignal(parsed.signal);
  const state = useApi(
    `evidence ${parsed.signal} ${pool} ${aroundIso}`,
    (signal) =>
      fetchSeries({ signal: parsed.signal, by: pool ? 'pool' : '', fromMs, toMs, stepMs: step }, signal),
    { live: false },
  );
  return (
    <div className="rec-card__chart" data-testid="evidence-chart">
      <AsyncContent
        state={state}
        isEmpty={(d) => d.series.length === 0}
        empty={<EmptyState title="No series for this evidence" />}
      >
        {(data) => (
          <TimeSeriesChart
            series={pool ? data.series.filter((s) => String(s.key.pool) === pool) : data.series}
            fromMs={fromMs}
            toMs={toMs}
            height={150}
            {...(unit ? { unit } : {})}
            threshold={evidence.threshold !== null ? { value: evidence.threshold, label: 'threshold' } : null}
            marker={{ t: at, label: 'proposed' }}
            ariaLabel={`${parsed.signal}${pool ? ` for ${pool}` : ''} around the recommendation`}
          />
        )}
      </AsyncContent>
    </div>
  );
}
