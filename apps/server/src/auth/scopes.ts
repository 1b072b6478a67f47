// The four API scopes. `admin` covers every scope; `operate` includes `read` (approving a
// recommendation means reading it first); `ingest` is separate so a Collector's token reads nothing.

export const SCOPES = ['ingest', 'read', 'operate', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** Whether a token holding `granted` may call an endpoint that needs `required`. */
export function hasScope(granted: readonly Scope[], required: Scope): boolean {
  if (granted.includes('admin') || granted.includes(required)) return true;
  return required === 'read' && granted.includes('operate');
}
