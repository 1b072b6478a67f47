import type { ReactNode } from 'react';
import { ApiError } from '../../lib/api-client.ts';
import type { ApiState } from '../../lib/use-api.ts';

export function LoadingState({ label = 'Loading…' }: { label?: string }) {
  return (
    <div className="state state--loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}

export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="state state--empty" data-state="empty">
      <strong>{title}</strong>
      {children ? <div className="state__hint">{children}</div> : null}
    </div>
  );
}

export function ErrorState({ error, onRetry }: { error: Error; onRetry?: () => void }) {
  const missing = error instanceof ApiError && error.isMissingRoute;
  return (
    <div className="state state--error" role="alert" data-state="error">
      <strong>{missing ? 'Not available on this server yet' : 'Could not load this'}</strong>
      <div className="state__hint">
        {missing ? (
          <>
            This Governor does not answer <code>{(error as ApiError).path.split('?')[0]}</code>. Upgrade the
            server or check that the feature is enabled.
          </>
        ) : (
          <>
            {error.message}
            {error instanceof ApiError && error.code ? (
              <code className="state__code">{error.code}</code>
            ) : null}
          </>
        )}
      </div>
      {onRetry ? (
        <button type="button" className="button button--small" onClick={onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

/**
 * Renders loading, error, empty or the content for one ApiState. A failed live refresh over good
 * data keeps the data and shows a small notice instead of replacing the view.
 */
export function AsyncContent<T>({
  state,
  isEmpty,
  empty,
  loadingLabel,
  children,
}: {
  state: ApiState<T>;
  isEmpty?: (data: T) => boolean;
  empty?: ReactNode;
  loadingLabel?: string;
  children: (data: T) => ReactNode;
}) {
  if (state.data === null) {
    if (state.error) return <ErrorState error={state.error} onRetry={state.reload} />;
    return <LoadingState {...(loadingLabel ? { label: loadingLabel } : {})} />;
  }
  const content = isEmpty?.(state.data)
    ? (empty ?? <EmptyState title="No data in this time range" />)
    : children(state.data);
  return (
    <>
      {state.error ? (
        <p className="stale-notice" role="status">
          Showing earlier data; the last refresh failed: {state.error.message}
        </p>
      ) : null}
      {content}
    </>
  );
}
