import { useCallback, useEffect, useRef, useState } from 'react';
import type { ApiError } from './api-client.ts';
import { useLive } from './live-updates.tsx';

export interface ApiState<T> {
  /** The last good answer for this key; kept while a live refresh is in flight or fails. */
  data: T | null;
  error: ApiError | Error | null;
  loading: boolean;
  reload(): void;
}

interface Internal<T> {
  key: string | null;
  data: T | null;
  error: ApiError | Error | null;
  loading: boolean;
}

/**
 * Loads data for `key` and again on every live tick. A new key drops the old data (the view shows
 * its loading state); a refresh of the same key keeps it (no flicker). `key` null waits.
 */
export function useApi<T>(
  key: string | null,
  load: (signal: AbortSignal) => Promise<T>,
  options: { live?: boolean; refreshOn?: unknown[] } = {},
): ApiState<T> {
  const { tick } = useLive();
  const liveTick = options.live === false ? 0 : tick;
  // Values that trigger a refresh without dropping the data (e.g. a relative range that moved).
  const refreshKey = JSON.stringify(options.refreshOn ?? []);
  const [state, setState] = useState<Internal<T>>({
    key: null,
    data: null,
    error: null,
    loading: key !== null,
  });
  const [reloads, setReloads] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  // biome-ignore lint/correctness/useExhaustiveDependencies: liveTick, refreshKey and reloads are triggers, not inputs
  useEffect(() => {
    if (key === null) return;
    const controller = new AbortController();
    setState((prev) =>
      prev.key === key ? { ...prev, loading: true } : { key, data: null, error: null, loading: true },
    );
    loadRef.current(controller.signal).then(
      (data) => {
        if (!controller.signal.aborted) setState({ key, data, error: null, loading: false });
      },
      (error: unknown) => {
        if (controller.signal.aborted) return;
        const err = error instanceof Error ? error : new Error(String(error));
        setState((prev) => ({ key, data: prev.key === key ? prev.data : null, error: err, loading: false }));
      },
    );
    return () => controller.abort();
  }, [key, liveTick, refreshKey, reloads]);

  const reload = useCallback(() => setReloads((n) => n + 1), []);
  const current = state.key === key;
  return {
    data: current ? state.data : null,
    error: current ? state.error : null,
    loading: key !== null && (!current || state.loading),
    reload,
  };
}
