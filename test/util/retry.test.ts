import { describe, expect, it } from 'vitest';
import { Backoff, backoffDelay, retry, type RetryFailure } from '../../src/util/index.js';

const policy = { baseMs: 100, maxMs: 1000 };

describe('backoffDelay', () => {
  it('doubles from baseMs up to maxMs, and jitter only ever shortens a wait, by at most its share', () => {
    const none = () => 0;
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(n, policy, none))).toEqual([100, 200, 400, 800, 1000, 1000]);
    const most = () => 0.999999;
    expect([1, 4, 9].map((n) => backoffDelay(n, policy, most))).toEqual([80, 640, 800]);
    expect(backoffDelay(3, { ...policy, factor: 3, jitter: 0.5 }, () => 1)).toBe(450);
    for (let i = 0; i < 200; i++) {
      const d = backoffDelay(2, policy);
      expect(d).toBeGreaterThanOrEqual(160);
      expect(d).toBeLessThanOrEqual(200);
    }
  });

  it('Backoff counts failures and starts over after reset', () => {
    const b = new Backoff(policy, () => 0);
    expect([b.next(), b.next(), b.next()]).toEqual([100, 200, 400]);
    expect(b.attempt).toBe(3);
    b.reset();
    expect(b.next()).toBe(100);
  });
});

describe('retry', () => {
  it('tries again after retryable failures, telling onRetry each attempt and wait, and resolves with the first success', async () => {
    const heard: RetryFailure[] = [];
    const seen: number[] = [];
    const result = await retry(
      async (attempt) => {
        seen.push(attempt);
        if (attempt < 3) throw new Error(`down ${attempt}`);
        return 'up';
      },
      { baseMs: 1, maxMs: 4, random: () => 0, onRetry: (f) => heard.push(f) },
    );
    expect(result).toBe('up');
    expect(seen).toEqual([1, 2, 3]);
    expect(heard.map((f) => [(f.err as Error).message, f.attempt, f.delayMs])).toEqual([
      ['down 1', 1, 1],
      ['down 2', 2, 2],
    ]);
  });

  it('throws a failure that is not retryable at once', async () => {
    let calls = 0;
    const fatal = new TypeError('bad answer');
    await expect(
      retry(
        async () => {
          calls++;
          throw fatal;
        },
        { ...policy, retryable: (err) => !(err instanceof TypeError) },
      ),
    ).rejects.toBe(fatal);
    expect(calls).toBe(1);
  });

  it('an abort ends the wait: retry rejects with the signal reason, and tries no more', async () => {
    const controller = new AbortController();
    const reason = new Error('shutting down');
    let calls = 0;
    const running = retry(
      async () => {
        calls++;
        throw new Error('unreachable');
      },
      // A wait far longer than any test: only the abort can end it.
      { baseMs: 3_600_000, maxMs: 3_600_000, signal: controller.signal, onRetry: () => controller.abort(reason) },
    );
    await expect(running).rejects.toBe(reason);
    expect(calls).toBe(1);
  });
});
