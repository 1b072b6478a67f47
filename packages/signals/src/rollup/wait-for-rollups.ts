import { ReadDeadlineError, RollupStoppedError, readDeadlineLeft } from '@governor/store';
import type { FactsRefresher } from './refresh-request-facts.ts';

/**
 * A read of the rollups first waits until they hold every span acknowledged so far (read-your-writes),
 * but no longer than the read deadline: under heavy ingest, or while a checkpoint holds staged rows,
 * that wait could otherwise take minutes. Past it the read fails with GOV_ERR_READ_TIMEOUT (503,
 * Retry-After) rather than answering from rollups that miss acknowledged spans; the refresh itself
 * goes on, so a retry finds the rollups further along. Once the store has stopped the refresh
 * (shutdown), reads still running — a last control tick, an alert evaluation — answer from the
 * rollups as they are instead of failing.
 */
export async function waitForRollups(
  refresher: FactsRefresher,
  deadlineMs: number,
  stopSignal?: AbortSignal,
): Promise<void> {
  if (stopSignal?.aborted) return;
  // Inside one read (withReadDeadline) the wait gets what is left of that read's deadline.
  const read = readDeadlineLeft();
  const waitMs = read ? Math.min(deadlineMs, read.leftMs) : deadlineMs;
  const reportedMs = read && waitMs < deadlineMs ? read.totalMs : deadlineMs;
  let timer: NodeJS.Timeout | undefined;
  let onStop: (() => void) | undefined;
  // A wait can sit behind a checkpoint cycle (rows staged), which stop() does not cancel.
  const stopped = new Promise<void>((resolve) => {
    onStop = resolve;
    stopSignal?.addEventListener('abort', onStop, { once: true });
  });
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new ReadDeadlineError(
            reportedMs,
            `the request rollup did not take in the spans acknowledged so far within ${reportedMs} ms (ingest is ahead of the rollup refresh, or a checkpoint is moving staged rows), so the read was not run; retry after Retry-After seconds, or raise server.read_deadline_ms`,
          ),
        ),
      waitMs,
    );
  });
  try {
    await Promise.race([refresher.ensureFresh(), expired, stopped]);
  } catch (error) {
    if (!(error instanceof RollupStoppedError)) throw error;
  } finally {
    clearTimeout(timer);
    if (onStop) stopSignal?.removeEventListener('abort', onStop);
  }
}
