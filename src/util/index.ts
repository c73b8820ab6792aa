/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Wraps an async function so that calls run one at a time, in call order; a failed call does not stop the next. */
export function serialized<A extends unknown[], R>(fn: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  let tail: Promise<unknown> = Promise.resolve();
  return (...args: A) => {
    const run = tail.then(() => fn(...args));
    tail = run.catch(() => undefined);
    return run;
  };
}

export const isAbortError = (err: unknown, signal: AbortSignal) => signal.aborted && err === signal.reason;

/** Current time as Unix nanoseconds. */
export const nowNanos = (): bigint => BigInt(Date.now()) * 1_000_000n;

export const toBase64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
export const toHex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/**
 * JSON.parse that keeps integers beyond 2^53 exact by turning them into strings
 * (which proto3 JSON readers accept for 64-bit fields). The node writes 64-bit
 * integers as JSON numbers, and nanosecond times are larger than a double holds.
 */
export function parseJsonExact(text: string): unknown {
  let out = '';
  let last = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if ((c >= 0x30 && c <= 0x39) || c === 0x2d) {
      let j = i + 1;
      while (j < text.length && /[0-9.eE+-]/.test(text[j]!)) j++;
      const token = text.slice(i, j);
      if (/^-?\d{16,}$/.test(token) && !Number.isSafeInteger(Number(token))) {
        out += text.slice(last, i) + `"${token}"`;
        last = j;
      }
      i = j - 1;
    }
  }
  return JSON.parse(out + text.slice(last));
}

/** Significant digits a number is shown to a person with (the dashboard, text logs); JSON keeps it exact. */
const PEOPLE_DIGITS = 4;

/** A number rounded as a person reads it: 0.00205134 → 0.002051, 1234567 → 1235000; up to 4 digits unchanged. */
export const roundForPeople = (n: number): number => Number(n.toPrecision(PEOPLE_DIGITS));
export { Backoff, backoffDelay, retry, type BackoffPolicy, type RetryFailure, type RetryOptions } from './retry.js';
export { builtFile, packageRoot } from './package.js';
