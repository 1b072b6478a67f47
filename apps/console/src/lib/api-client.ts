// One way to call Governor: JSON in, JSON out, errors as ApiError with the server's stable code.

export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly path: string,
  ) {
    super(message);
  }

  /** The route does not exist on this server (an API that has not landed or is turned off). */
  get isMissingRoute(): boolean {
    return this.status === 404 && this.message.startsWith('no route for');
  }
}

const TOKEN_KEY = 'governor.token';

/** An API token (auth.tokens in the config) kept in this browser only. */
export function readApiToken(): string | null {
  try {
    return globalThis.localStorage?.getItem(TOKEN_KEY) ?? null;
  } catch {
    return null;
  }
}

export function writeApiToken(token: string | null): void {
  if (token) localStorage.setItem(TOKEN_KEY, token);
  else localStorage.removeItem(TOKEN_KEY);
}

export const AUTH_REQUIRED_EVENT = 'governor:auth-required';

/** Tells the console shell to ask for a token (a 401 from any call). */
function announceAuthRequired(message: string): void {
  if (typeof window === 'undefined') return;
  window.dispatchEvent(new CustomEvent(AUTH_REQUIRED_EVENT, { detail: message }));
}

/** The SSE URL; EventSource cannot send headers, so a token travels as `access_token`. */
export function eventsUrl(): string {
  const token = readApiToken();
  return token ? `/api/events?access_token=${encodeURIComponent(token)}` : '/api/events';
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  body?: unknown;
  signal?: AbortSignal;
}

export async function requestJson<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const token = readApiToken();
  if (token) headers.authorization = `Bearer ${token}`;
  let response: Response;
  try {
    response = await fetch(path, {
      method: options.method ?? 'GET',
      headers,
      body: options.body === undefined ? null : JSON.stringify(options.body),
      signal: options.signal ?? null,
    });
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    throw new ApiError(0, 'NETWORK', `cannot reach Governor (${(error as Error).message})`, path);
  }
  const text = await response.text();
  let payload: unknown = null;
  if (text !== '') {
    try {
      payload = JSON.parse(text);
    } catch {
      payload = null;
    }
  }
  if (!response.ok) {
    const error = (payload as { error?: { code?: string; message?: string } } | null)?.error;
    if (response.status === 401) announceAuthRequired(error?.message ?? 'this Governor needs an API token');
    throw new ApiError(
      response.status,
      error?.code ?? `HTTP_${response.status}`,
      error?.message ?? (text.slice(0, 200) || response.statusText),
      path,
    );
  }
  if (payload === null && text !== '') {
    throw new ApiError(response.status, 'NOT_JSON', `expected JSON from ${path}`, path);
  }
  return payload as T;
}

/** Builds `path?a=1&b=2`, leaving out empty values. */
export function buildPath(path: string, params: Record<string, string | number | null | undefined>): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === null || value === undefined || value === '') continue;
    query.set(key, String(value));
  }
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}
