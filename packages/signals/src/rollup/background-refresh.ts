import type { Signals } from '../create-signals.ts';

export interface BackgroundRefresh {
  /** Stops the timer and waits for a refresh in progress. */
  stop(): Promise<void>;
}

/**
 * Keeps the rollups close to ingest between reads: refreshes every `intervalMs` (never two at once),
 * so a read's own catch-up (every read applies what was committed since the last refresh) stays small.
 */
export function startBackgroundRefresh(
  signals: Pick<Signals, 'refresh'>,
  options: { intervalMs: number; onError?: (error: unknown) => void },
): BackgroundRefresh {
  let stopped = false;
  let current: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout | null = null;
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      current = signals
        .refresh()
        .catch((error: unknown) => options.onError?.(error))
        .finally(schedule);
    }, options.intervalMs);
    timer.unref();
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await current;
    },
  };
}
