import { type LiveMode, useLive } from '../../lib/live-updates.tsx';
import { formatTime } from '../../lib/format.ts';

const LABELS: Record<LiveMode, string> = {
  connecting: 'Connecting…',
  sse: 'Live',
  polling: 'Polling every 10 s',
  paused: 'Paused',
};

/** Shows how the console stays current (SSE stream or polling) and lets the operator pause it. */
export function LiveIndicator() {
  const { mode, lastUpdateMs, setPaused, refresh } = useLive();
  const paused = mode === 'paused';
  return (
    <div className="live">
      <span className={`live__dot live__dot--${mode}`} aria-hidden="true" />
      <span className="live__label" data-testid="live-mode" data-mode={mode}>
        {LABELS[mode]}
        {lastUpdateMs && !paused ? <span className="live__time"> · {formatTime(lastUpdateMs)}</span> : null}
      </span>
      <button
        type="button"
        className="button button--ghost button--small"
        onClick={() => setPaused(!paused)}
        aria-pressed={paused}
      >
        {paused ? 'Resume' : 'Pause'}
      </button>
      <button type="button" className="button button--ghost button--small" onClick={refresh}>
        Refresh
      </button>
    </div>
  );
}
