import type { ControlAction, EvaluateResponse } from '@governor/conventions';

/**
 * Lockstep call: asks Governor what it would do at event time `at` and returns the actions it
 * decided. Throws with the status and body text when the call fails.
 */
export async function requestEvaluate(
  baseUrl: string,
  at: string,
  timeoutMs = 60_000,
): Promise<ControlAction[]> {
  const url = `${baseUrl.replace(/\/+$/, '')}/api/control/evaluate`;
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ at }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`POST ${url} → HTTP ${response.status}: ${text.slice(0, 300)}`);
  let body: Partial<EvaluateResponse>;
  try {
    body = JSON.parse(text) as Partial<EvaluateResponse>;
  } catch {
    throw new Error(`POST ${url} → response is not JSON: ${text.slice(0, 200)}`);
  }
  return Array.isArray(body.actions) ? body.actions : [];
}
