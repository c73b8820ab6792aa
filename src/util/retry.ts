import { sleep } from './index.js';

/**
 * The node's one retry policy: capped exponential backoff with jitter. Every
 * loop that waits before trying again (the execution client, the ABCI app, a
 * supervised child, a P2P peer, DA) takes its waits from here.
 */
export interface BackoffPolicy {
  /** The wait after the first failure. */
  baseMs: number;
  /** No wait is longer than this. */
  maxMs: number;
  /** Each wait is this many times the one before (default 2). */
  factor?: number;
  /**
   * Share of each wait taken off at random, 0 to 1 (default 0.2), so nodes
   * that lost the same peer at the same moment do not all retry in step.
   * A wait stays within [(1 - jitter)·w, w]: never longer than the cap.
   */
  jitter?: number;
}

const DEFAULT_FACTOR = 2;
const DEFAULT_JITTER = 0.2;

/** The wait after failure number `attempt` (1 = the first): baseMs·factor^(attempt-1), capped at maxMs, less up to `jitter` of it at random. */
export function backoffDelay(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const { baseMs, maxMs, factor = DEFAULT_FACTOR, jitter = DEFAULT_JITTER } = policy;
  const capped = Math.min(maxMs, baseMs * factor ** Math.max(0, attempt - 1));
  return Math.round(capped * (1 - jitter * random()));
}

/**
 * Consecutive failures and the wait after each, for a loop that is more than
 * one call tried again (a redial loop, a submitter that reports its attempt
 * count): `next()` after a failure, `reset()` after a success.
 */
export class Backoff {
  /** Failures since the last reset. */
  attempt = 0;

  constructor(
    private readonly policy: BackoffPolicy,
    private readonly random: () => number = Math.random,
  ) {}

  /** Counts a failure; the wait before the next try. */
  next(): number {
    this.attempt++;
    return backoffDelay(this.attempt, this.policy, this.random);
  }

  reset(): void {
    this.attempt = 0;
  }
}

/** One failed attempt, as `onRetry` hears of it before the wait. */
export interface RetryFailure {
  err: unknown;
  /** 1 for the first failure. */
  attempt: number;
  /** The wait before the next attempt. */
  delayMs: number;
}

export interface RetryOptions extends BackoffPolicy {
  /** Aborting it ends a wait at once: retry rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Whether a failure is worth another attempt (default: every failure). Any other is thrown at once. */
  retryable?: (err: unknown) => boolean;
  /** Hears of each failure that will be tried again, before the wait: log it here. */
  onRetry?: (failure: RetryFailure) => void;
  /** Supplies the jitter (tests); Math.random by default. */
  random?: () => number;
}

/** Runs `fn` until it resolves, waiting with backoff after each retryable failure. `fn` gets the attempt number, 1 first. */
export async function retry<T>(fn: (attempt: number) => Promise<T>, opts: RetryOptions): Promise<T> {
  const backoff = new Backoff(opts, opts.random);
  for (;;) {
    try {
      return await fn(backoff.attempt + 1);
    } catch (err) {
      if (opts.retryable && !opts.retryable(err)) throw err;
      const delayMs = backoff.next();
      opts.onRetry?.({ err, attempt: backoff.attempt, delayMs });
      await sleep(delayMs, opts.signal);
    }
  }
}
