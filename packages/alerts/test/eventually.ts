/**
 * Awaits a condition that background work (deliveries, retries) makes true, checking it again
 * whenever the event loop has had a moment; fails with the last value after `timeoutMs`.
 */
export async function eventually<T>(
  check: () => Promise<T> | T,
  accept: (value: T) => boolean,
  { timeoutMs = 20_000, what = 'condition' }: { timeoutMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (accept(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
