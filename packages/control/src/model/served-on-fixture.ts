import type { RequestArrival } from '@governor/signals';

/** Prefill ms per uncached prompt token of the pools servedOn builds. */
export const FIXTURE_MS_PER_TOKEN = 0.2;

/**
 * Test requests as a first-come-first-served pool of `replicas` really served them: each waits for
 * the replica free first (its measured `queueMs`), then prefills at FIXTURE_MS_PER_TOKEN; TTFT =
 * wait + prefill + 40 ms, and e2e = TTFT + its decode (`decodeMs`, 0 when not given). A replica is
 * held for `holdFactor` × the prefill (a runtime whose full decode batches hold replicas longer).
 */
export function servedOn(
  replicas: number,
  reqs: { gapMs: number; tokens: number; decodeMs?: number }[],
  holdFactor = 1,
): RequestArrival[] {
  const free = new Array<number>(replicas).fill(0);
  let at = 0;
  return reqs.map(({ gapMs, tokens, decodeMs }) => {
    at += gapMs;
    free.sort((a, b) => a - b);
    const start = Math.max(at, free[0]!);
    free[0] = start + tokens * FIXTURE_MS_PER_TOKEN * holdFactor;
    const ttftMs = start - at + tokens * FIXTURE_MS_PER_TOKEN + 40;
    return {
      arriveMs: at,
      uncachedTokens: tokens,
      ttftMs,
      e2eMs: ttftMs + (decodeMs ?? 0),
      queueMs: start - at,
    };
  });
}

/**
 * The requests of a sample that ended within a deadline their clients all gave (`deadlineMs`), as a
 * real sample holds them: those that ended past it failed and carry no TTFT to replay.
 */
export function finishedBy(arrivals: readonly RequestArrival[], deadlineMs: number): RequestArrival[] {
  return arrivals.filter((a) => (a.e2eMs ?? a.ttftMs) <= deadlineMs).map((a) => ({ ...a, deadlineMs }));
}
