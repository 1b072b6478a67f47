import { eventsUrl as defaultEventsUrl } from './api-client.ts';
import {
  type ReactNode,
  createContext,
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useRef,
  useState,
} from 'react';

// Live updates: listen to GET /api/events (server-sent events) and bump a tick that every data
// hook refetches on. When the stream is unavailable (no route yet, a proxy that buffers, an
// error), fall back to polling every 10 s and try the stream again later.

export type LiveMode = 'connecting' | 'sse' | 'polling' | 'paused';

interface LiveContextValue {
  tick: number;
  mode: LiveMode;
  lastUpdateMs: number | null;
  setPaused(paused: boolean): void;
  refresh(): void;
}

const LiveContext = createContext<LiveContextValue>({
  tick: 0,
  mode: 'paused',
  lastUpdateMs: null,
  setPaused: () => {},
  refresh: () => {},
});

export const POLL_INTERVAL_MS = 10_000;
/** Coalesce bursts of events (every ingest commit may emit one) into at most one refresh per window. */
const MIN_REFRESH_GAP_MS = 3_000;
const SSE_RETRY_MS = 60_000;
const SSE_BACKGROUND_REFRESH_MS = 30_000;
const LIVE_EVENT_TYPES = [
  'recommendation.created',
  'recommendation.updated',
  'control.action',
  'control.delivery',
  'control.tick',
  'alert.pending',
  'alert.firing',
  'alert.resolved',
  'alert.delivery',
  'signals.updated',
  'ingest.committed',
];

export function LiveProvider({
  children,
  eventsUrl = defaultEventsUrl(),
}: {
  children: ReactNode;
  eventsUrl?: string;
}) {
  const [tick, setTick] = useState(0);
  const [mode, setMode] = useState<LiveMode>('connecting');
  const [paused, setPaused] = useState(false);
  const [lastUpdateMs, setLastUpdateMs] = useState<number | null>(null);
  const lastTickRef = useRef(0);
  const pendingRef = useRef<ReturnType<typeof setTimeout> | null>(null);

  const bump = useCallback(() => {
    const now = Date.now();
    const wait = lastTickRef.current + MIN_REFRESH_GAP_MS - now;
    if (wait <= 0) {
      lastTickRef.current = now;
      setTick((t) => t + 1);
      setLastUpdateMs(now);
      return;
    }
    if (pendingRef.current) return;
    pendingRef.current = setTimeout(() => {
      pendingRef.current = null;
      lastTickRef.current = Date.now();
      setTick((t) => t + 1);
      setLastUpdateMs(Date.now());
    }, wait);
  }, []);

  useEffect(() => {
    if (paused) {
      setMode('paused');
      return;
    }
    let source: EventSource | null = null;
    let pollTimer: ReturnType<typeof setInterval> | null = null;
    let retryTimer: ReturnType<typeof setTimeout> | null = null;
    let stopped = false;

    const startPolling = () => {
      setMode('polling');
      if (pollTimer) clearInterval(pollTimer);
      pollTimer = setInterval(bump, POLL_INTERVAL_MS);
      retryTimer = setTimeout(connect, SSE_RETRY_MS);
    };
    const connect = () => {
      if (stopped) return;
      if (typeof EventSource === 'undefined') {
        startPolling();
        return;
      }
      setMode('connecting');
      source = new EventSource(eventsUrl);
      source.onopen = () => {
        // Events cover decisions and alerts; ingest has none, so data views still refresh slowly.
        if (pollTimer) clearInterval(pollTimer);
        pollTimer = setInterval(bump, SSE_BACKGROUND_REFRESH_MS);
        setMode('sse');
      };
      source.onmessage = bump;
      // Named events (recommendation.created, control.action, alert.firing…) all mean "refresh".
      for (const type of LIVE_EVENT_TYPES) {
        source.addEventListener(type, bump);
      }
      source.onerror = () => {
        // The browser reconnects by itself while readyState is CONNECTING; CLOSED means it gave up
        // (e.g. a 404 or a non-event-stream answer).
        if (source?.readyState === EventSource.CLOSED) {
          source.close();
          source = null;
          startPolling();
        } else {
          setMode('connecting');
        }
      };
    };
    connect();
    return () => {
      stopped = true;
      source?.close();
      if (pollTimer) clearInterval(pollTimer);
      if (retryTimer) clearTimeout(retryTimer);
    };
  }, [paused, eventsUrl, bump]);

  useEffect(
    () => () => {
      if (pendingRef.current) clearTimeout(pendingRef.current);
    },
    [],
  );

  const refresh = useCallback(() => {
    lastTickRef.current = Date.now();
    setTick((t) => t + 1);
    setLastUpdateMs(Date.now());
  }, []);

  const value = useMemo(
    () => ({ tick, mode, lastUpdateMs, setPaused, refresh }),
    [tick, mode, lastUpdateMs, refresh],
  );
  return <LiveContext.Provider value={value}>{children}</LiveContext.Provider>;
}

export function useLive(): LiveContextValue {
  return useContext(LiveContext);
}
