import { useEffect } from 'react';
import { fetchDashboard, fetchDashboards } from '../../api/dashboards.ts';
import { DashboardPanel } from '../../components/DashboardPanel/index.ts';
import { Panel } from '../../components/Panel/index.ts';
import { AsyncContent, EmptyState } from '../../components/StateView/index.ts';
import { useApi } from '../../lib/use-api.ts';
import { hrefFor, navigateTo, useUrlParams } from '../../lib/url-state.ts';

export function DashboardsView() {
  const [params] = useUrlParams();
  return params.dashboard ? <DashboardPage id={params.dashboard} /> : <DashboardList />;
}

function DashboardList() {
  const list = useApi('dashboards', (signal) => fetchDashboards(signal));
  return (
    <div className="view" data-testid="view-dashboards">
      <AsyncContent
        state={list}
        isEmpty={(d) => d.dashboards.length === 0 && d.invalid.length === 0}
        empty={
          <EmptyState title="No dashboards yet">
            Add a JSON file to {list.data ? <code>{list.data.dir}</code> : 'the dashboards folder'}; it
            appears here without a restart.
          </EmptyState>
        }
      >
        {(data) => (
          <>
            <ul className="dashboard-list" data-testid="dashboard-list">
              {data.dashboards.map((d) => (
                <li key={d.id} className="dashboard-card">
                  <a
                    href={hrefFor({ dashboard: d.id })}
                    onClick={(e) => {
                      if (e.metaKey || e.ctrlKey || e.shiftKey) return;
                      e.preventDefault();
                      navigateTo({ dashboard: d.id });
                    }}
                  >
                    <strong>{d.title}</strong>
                  </a>
                  {d.description ? <p>{d.description}</p> : null}
                  <div className="dashboard-card__meta">
                    <span className="mono">{d.id}.json</span> · {d.panelCount} panels
                    {d.tags.map((t) => (
                      <span key={t} className="label-chip">
                        {t}
                      </span>
                    ))}
                  </div>
                </li>
              ))}
            </ul>
            {data.invalid.length ? (
              <Panel
                title="Files with problems"
                subtitle="fix these files; the schema is Dashboard in @governor/conventions"
                testId="dashboard-invalid"
              >
                <ul className="issue-list">
                  {data.invalid.map((f) => (
                    <li key={f.file}>
                      <span className="mono">{f.file}</span>
                      <ul>
                        {f.issues.map((i) => (
                          <li key={`${i.path}-${i.message}`}>
                            <code>{i.path}</code>: {i.message}
                          </li>
                        ))}
                      </ul>
                    </li>
                  ))}
                </ul>
              </Panel>
            ) : null}
            <p className="muted">
              Dashboards are files in <code>{data.dir}</code>. Add or edit a <code>.json</code> file and
              reload.
            </p>
          </>
        )}
      </AsyncContent>
    </div>
  );
}

function DashboardPage({ id }: { id: string }) {
  const [params, setParams] = useUrlParams();
  const dashboard = useApi(`dashboard ${id}`, (signal) => fetchDashboard(id, signal), { live: false });
  const defaultRange = dashboard.data?.defaultRange;
  // A dashboard's default range applies when the URL does not choose one.
  useEffect(() => {
    if (defaultRange && !params.range && !params.from) setParams({ range: defaultRange }, { replace: true });
  }, [defaultRange, params.range, params.from, setParams]);
  return (
    <div className="view" data-testid="view-dashboard">
      <p className="breadcrumbs">
        <a href={hrefFor({ dashboard: null })}>All dashboards</a>
      </p>
      <AsyncContent state={dashboard}>
        {(data) => (
          <>
            <header className="dashboard-header">
              <h2>{data.title}</h2>
              {data.description ? <p className="muted">{data.description}</p> : null}
            </header>
            <div className="dashboard-grid">
              {data.panels.map((panel, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: panels are positional in the file
                <DashboardPanel key={i} dashboardId={data.id} index={i} panel={panel} />
              ))}
            </div>
          </>
        )}
      </AsyncContent>
    </div>
  );
}
