// No vitest import here: fixtures run as plain node scripts use it too.

/** Thrown from a waitFor check: stop waiting at once (the awaited thing can no longer happen). */
export class WaitAborted extends Error {}

/** Polls `check` until it returns a truthy value or the deadline passes. */
export async function waitFor<T>(
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  what: string,
  timeoutMs = 15_000,
  intervalMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      if (err instanceof WaitAborted) throw err;
      lastErr = err;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}${lastErr ? `: ${(lastErr as Error).message}` : ''}`);
}
