import type { Recommendation, RecommendationState } from '@governor/conventions';
import { useState } from 'react';
import { decideRecommendation, fetchActions, fetchRecommendations } from '../../api/control.ts';
import { AuditLog } from '../../components/AuditLog/index.ts';
import { Panel } from '../../components/Panel/index.ts';
import { RecommendationCard } from '../../components/RecommendationCard/index.ts';
import { AsyncContent, EmptyState } from '../../components/StateView/index.ts';
import { requestJson } from '../../lib/api-client.ts';
import { useApi } from '../../lib/use-api.ts';
import { useUrlParams } from '../../lib/url-state.ts';

export const INBOX_TABS: { id: string; label: string; states: RecommendationState[] }[] = [
  { id: 'open', label: 'Open', states: ['proposed', 'approved'] },
  { id: 'applied', label: 'Applied', states: ['applied'] },
  { id: 'verified', label: 'Verified', states: ['verified'] },
  { id: 'rolled_back', label: 'Rolled back', states: ['rolled_back'] },
  { id: 'closed', label: 'Rejected / expired', states: ['rejected', 'expired'] },
];

export function RecommendationsView() {
  const [params, setParams] = useUrlParams();
  const tab = INBOX_TABS.find((t) => t.id === params.tab) ?? INBOX_TABS[0]!;
  const recs = useApi('recommendations', (signal) => fetchRecommendations(null, signal));
  const actions = useApi('actions', (signal) => fetchActions(signal));
  const [evaluating, setEvaluating] = useState<string | null>(null);
  const [showRefreshes, setShowRefreshes] = useState(false);
  const [auditRows, setAuditRows] = useState(50);

  async function decide(id: string, decision: 'approve' | 'reject' | 'apply') {
    await decideRecommendation(id, decision);
    recs.reload();
    actions.reload();
  }

  async function evaluateNow() {
    setEvaluating('Running one control tick…');
    try {
      const result = await requestJson<{ recommendations?: unknown[] }>('/api/control/evaluate', {
        method: 'POST',
        body: {},
      });
      const count = result.recommendations?.length ?? 0;
      setEvaluating(`Control tick done: ${count} open recommendation${count === 1 ? '' : 's'}.`);
      recs.reload();
      actions.reload();
    } catch (error) {
      setEvaluating(`Could not run the control loop: ${(error as Error).message}`);
    }
  }

  const counts = new Map<string, number>();
  for (const t of INBOX_TABS) {
    counts.set(t.id, (recs.data ?? []).filter((r) => t.states.includes(r.state)).length);
  }

  return (
    <div className="view" data-testid="view-recommendations">
      <div className="filters">
        <div className="tabs" role="tablist" aria-label="Recommendation states">
          {INBOX_TABS.map((t) => (
            <button
              key={t.id}
              type="button"
              role="tab"
              aria-selected={t.id === tab.id}
              className={`tab ${t.id === tab.id ? 'is-active' : ''}`}
              onClick={() => setParams({ tab: t.id === 'open' ? null : t.id })}
            >
              {t.label}
              {recs.data ? <span className="tab__count">{counts.get(t.id)}</span> : null}
            </button>
          ))}
        </div>
        <button type="button" className="button button--ghost button--small" onClick={evaluateNow}>
          Evaluate now
        </button>
        {evaluating ? (
          <span className="muted" role="status">
            {evaluating}
          </span>
        ) : null}
      </div>
      <section
        aria-label={`${tab.label} recommendations`}
        className="rec-list"
        data-testid="recommendation-list"
      >
        <AsyncContent
          state={recs}
          isEmpty={(d) => d.filter((r) => tab.states.includes(r.state)).length === 0}
          empty={
            <EmptyState
              title={
                tab.id === 'open'
                  ? 'Nothing needs a decision'
                  : `No ${tab.label.toLowerCase()} recommendations`
              }
            >
              {tab.id === 'open'
                ? 'The control loop proposes scaling, routing and admission changes here when the signals call for one.'
                : null}
            </EmptyState>
          }
        >
          {(data) =>
            sortRecommendations(data.filter((r) => tab.states.includes(r.state))).map((rec) => (
              <RecommendationCard
                key={rec.id}
                recommendation={rec}
                onDecide={decide}
                showEvidenceChart={tab.id === 'open'}
              />
            ))
          }
        </AsyncContent>
      </section>
      <Panel
        title="Audit log"
        subtitle="every decision, apply, verification and rollback"
        testId="audit"
        actions={
          <label className="field field--inline">
            <input
              type="checkbox"
              checked={showRefreshes}
              onChange={(e) => setShowRefreshes(e.target.checked)}
            />
            <span className="field__label">Include refreshes</span>
          </label>
        }
      >
        <AsyncContent
          state={actions}
          isEmpty={(d) => d.length === 0}
          empty={<EmptyState title="No actions yet" />}
        >
          {(data) => {
            // A refresh re-states an open recommendation each tick: history, rarely news.
            const entries = showRefreshes ? data : data.filter((e) => e.type !== 'refreshed');
            return (
              <>
                <AuditLog entries={entries.slice(0, auditRows)} />
                {entries.length > auditRows ? (
                  <button
                    type="button"
                    className="button button--small show-more"
                    onClick={() => setAuditRows((n) => n + 50)}
                  >
                    Show more ({entries.length - auditRows} older)
                  </button>
                ) : null}
              </>
            );
          }}
        </AsyncContent>
      </Panel>
    </div>
  );
}

function sortRecommendations(list: Recommendation[]): Recommendation[] {
  return [...list].sort(
    (a, b) => Date.parse(b.updatedAt ?? b.createdAt) - Date.parse(a.updatedAt ?? a.createdAt),
  );
}
