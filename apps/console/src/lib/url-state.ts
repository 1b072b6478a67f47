import { useCallback, useSyncExternalStore } from 'react';

// The console keeps its state in the query string (view, range, pool, traceId…) so any screen can
// be shared as a URL and the back button works. One tiny store over window.location.

export type UrlParams = Readonly<Record<string, string>>;
export type UrlPatch = Record<string, string | number | null | undefined>;

const CHANGE_EVENT = 'governor:urlchange';
let cachedSearch: string | null = null;
let cachedParams: UrlParams = {};

function readParams(): UrlParams {
  const search = window.location.search;
  if (search !== cachedSearch) {
    cachedSearch = search;
    cachedParams = parseSearch(search);
  }
  return cachedParams;
}

export function parseSearch(search: string): UrlParams {
  const out: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(search)) out[key] = value;
  return out;
}

/** Applies a patch to a query string; null, undefined and '' remove a key. Keys keep a stable order. */
export function applyPatch(search: string, patch: UrlPatch): string {
  const params = new URLSearchParams(search);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null || value === undefined || value === '') params.delete(key);
    else params.set(key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

export function navigateTo(patch: UrlPatch, options: { replace?: boolean; reset?: boolean } = {}): void {
  const base = options.reset ? '' : window.location.search;
  const search = applyPatch(base, patch);
  const url = `${window.location.pathname}${search}${window.location.hash}`;
  if (search === window.location.search) return;
  if (options.replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  window.dispatchEvent(new Event(CHANGE_EVENT));
}

/** A link target for a patch (for <a href> so middle-click and copy-link work). */
export function hrefFor(patch: UrlPatch, options: { reset?: boolean } = {}): string {
  const base = options.reset ? '' : window.location.search;
  return `${window.location.pathname}${applyPatch(base, patch)}`;
}

function subscribe(onChange: () => void): () => void {
  window.addEventListener('popstate', onChange);
  window.addEventListener(CHANGE_EVENT, onChange);
  return () => {
    window.removeEventListener('popstate', onChange);
    window.removeEventListener(CHANGE_EVENT, onChange);
  };
}

export function useUrlParams(): [UrlParams, (patch: UrlPatch, options?: { replace?: boolean }) => void] {
  const params = useSyncExternalStore(subscribe, readParams, () => ({}));
  const update = useCallback(
    (patch: UrlPatch, options?: { replace?: boolean }) => navigateTo(patch, options),
    [],
  );
  return [params, update];
}
