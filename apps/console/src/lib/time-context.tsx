import { type ReactNode, createContext, useContext, useMemo } from 'react';
import { runSql } from '../api/sql.ts';
import { ApiError, requestJson } from './api-client.ts';
import { type TimeRange, resolveTimeRange } from './time-range.ts';
import { useApi } from './use-api.ts';
import { useUrlParams } from './url-state.ts';

// The selected time range, resolved against the newest event time Governor holds (its watermark
// from GET /api/signals; the newest span via SQL when that route is absent; the clock when empty).

export type AnchorSource = 'watermark' | 'newest-span' | 'clock';

interface TimeContextValue {
  range: TimeRange;
  anchorMs: number;
  anchorSource: AnchorSource;
  /** Options for useApi: relative ranges refresh when the anchor moves, absolute ones on every tick. */
  refreshOptions: { live: boolean; refreshOn: unknown[] };
  /** True until the first anchor answer arrives (views wait for it to avoid a double load). */
  pending: boolean;
}

const TimeContext = createContext<TimeContextValue | null>(null);

async function loadAnchor(signal: AbortSignal): Promise<{ ms: number; source: AnchorSource }> {
  try {
    const snapshot = await requestJson<{ at?: string | null }>('/api/signals?window=1m', { signal });
    const ms = snapshot.at ? Date.parse(snapshot.at) : Number.NaN;
    if (Number.isFinite(ms)) return { ms, source: 'watermark' };
  } catch (error) {
    if (!(error instanceof ApiError) || !error.isMissingRoute) throw error;
  }
  const result = await runSql('SELECT max(end_ns) // 1000000 AS newest_ms FROM spans', { limit: 1, signal });
  const value = Number(result.rows[0]?.[0]);
  if (Number.isFinite(value) && value > 0) return { ms: value, source: 'newest-span' };
  return { ms: Date.now(), source: 'clock' };
}

export function TimeProvider({ children }: { children: ReactNode }) {
  const [params] = useUrlParams();
  const anchor = useApi('anchor', loadAnchor);
  const anchorMs = anchor.data?.ms ?? null;
  const value = useMemo<TimeContextValue>(() => {
    const ms = anchorMs ?? Date.now();
    const range = resolveTimeRange(params, ms);
    const relative = range.key !== 'custom';
    return {
      range,
      anchorMs: ms,
      anchorSource: anchor.data?.source ?? 'clock',
      refreshOptions: relative
        ? { live: false, refreshOn: [range.fromMs, range.toMs] }
        : { live: true, refreshOn: [] },
      pending: anchorMs === null && anchor.error === null,
    };
  }, [params, anchorMs, anchor.data?.source, anchor.error]);
  return <TimeContext.Provider value={value}>{children}</TimeContext.Provider>;
}

export function useTimeRange(): TimeContextValue {
  const value = useContext(TimeContext);
  if (!value) throw new Error('useTimeRange must be used inside <TimeProvider>');
  return value;
}
