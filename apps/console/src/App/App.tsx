import { useEffect } from 'react';
import { AuthBanner } from '../components/AuthBanner/index.ts';
import { LiveIndicator } from '../components/LiveIndicator/index.ts';
import { TimeRangePicker } from '../components/TimeRangePicker/index.ts';
import { LiveProvider } from '../lib/live-updates.tsx';
import { TimeProvider, useTimeRange } from '../lib/time-context.tsx';
import { hrefFor, navigateTo, useUrlParams } from '../lib/url-state.ts';
import { AlertsView } from '../views/AlertsView/index.ts';
import { DashboardsView } from '../views/DashboardsView/index.ts';
import { FleetView } from '../views/FleetView/index.ts';
import { HopsView } from '../views/HopsView/index.ts';
import { PoliciesView } from '../views/PoliciesView/index.ts';
import { RecommendationsView } from '../views/RecommendationsView/index.ts';
import { SqlView } from '../views/SqlView/index.ts';
import { StorageView } from '../views/StorageView/index.ts';
import { TasksView } from '../views/TasksView/index.ts';
import { TracesView } from '../views/TracesView/index.ts';
import { VIEWS, type ViewId, resolveView } from './views.ts';

export function App() {
  return (
    <LiveProvider>
      <TimeProvider>
        <AppShell />
      </TimeProvider>
    </LiveProvider>
  );
}

function AppShell() {
  const [params, setParams] = useUrlParams();
  const view = resolveView(params.view);
  const { range, anchorSource } = useTimeRange();
  const title = VIEWS.find((v) => v.id === view)?.title ?? '';

  useEffect(() => {
    document.title = `${title} · Governor`;
    // On a narrow screen the nav scrolls sideways; keep the current view's link in sight.
    document
      .querySelector('.nav__link[aria-current="page"]')
      ?.scrollIntoView?.({ block: 'nearest', inline: 'nearest' });
  }, [title]);

  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <nav className="nav" aria-label="Views">
        <a className="nav__brand" href={hrefFor({ view: 'fleet' }, { reset: true })}>
          <img src="/favicon.svg" alt="" width={22} height={22} />
          <span>Governor</span>
        </a>
        <ul className="nav__list">
          {VIEWS.map((v) => (
            <li key={v.id}>
              <a
                className="nav__link"
                href={hrefFor(viewPatch(v.id))}
                aria-current={v.id === view ? 'page' : undefined}
                onClick={(event) => {
                  if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
                  event.preventDefault();
                  navigateTo(viewPatch(v.id));
                }}
              >
                {v.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <div className="main-column">
        <header className="topbar">
          <h1 className="topbar__title">{title}</h1>
          <div className="topbar__controls">
            <TimeRangePicker range={range} onChange={(patch) => setParams(patch)} />
            <LiveIndicator />
          </div>
          {anchorSource === 'clock' ? null : (
            <p className="topbar__note">
              Event time; ranges end at the newest data (
              {anchorSource === 'watermark' ? 'watermark' : 'newest span'}).
            </p>
          )}
        </header>
        <AuthBanner />
        <main id="main" className="content" tabIndex={-1}>
          <ViewSwitch view={view} />
        </main>
      </div>
    </div>
  );
}

/** Switching views keeps the shared state (range, pool) and drops view-specific parameters. */
function viewPatch(view: ViewId): Record<string, string | null> {
  const params = new URLSearchParams(window.location.search);
  const patch: Record<string, string | null> = { view };
  for (const key of params.keys()) {
    if (!['view', 'range', 'from', 'to', 'pool'].includes(key)) patch[key] = null;
  }
  return patch;
}

function ViewSwitch({ view }: { view: ViewId }) {
  switch (view) {
    case 'fleet':
      return <FleetView />;
    case 'hops':
      return <HopsView />;
    case 'traces':
      return <TracesView />;
    case 'tasks':
      return <TasksView />;
    case 'recommendations':
      return <RecommendationsView />;
    case 'policies':
      return <PoliciesView />;
    case 'alerts':
      return <AlertsView />;
    case 'sql':
      return <SqlView />;
    case 'dashboards':
      return <DashboardsView />;
    case 'storage':
      return <StorageView />;
  }
}
