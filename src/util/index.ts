import { scanJson } from './json-scan.js';

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

/**
 * Runs `fn` when `signal` aborts, or at once if it already has: a listener
 * added to an aborted signal never fires, and a wait that relied on one hung
 * (the HA coordinator's, stopped mid-campaign). Returns the remover.
 */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  if (signal.aborted) {
    fn();
    return () => undefined;
  }
  signal.addEventListener('abort', fn, { once: true });
  return () => signal.removeEventListener('abort', fn);
}

export const isAbortError = (err: unknown, signal: AbortSignal) => signal.aborted && err === signal.reason;

/**
 * Runs a component's loop under the node's signal (the DA submitter and
 * retriever, P2P catch-up, the forced-inclusion reader, based production, the
 * HA election): the abort ends it quietly, any other error goes to `onFatal`,
 * which stops the node. Resolves when the loop has ended.
 */
export function runLoop(run: (signal: AbortSignal) => Promise<void>, signal: AbortSignal, onFatal: (err: Error) => void): Promise<void> {
  return run(signal).catch((err) => {
    if (!isAbortError(err, signal)) onFatal(err as Error);
  });
}

/** Current time as Unix nanoseconds. */
export const nowNanos = (): bigint => BigInt(Date.now()) * 1_000_000n;

export { scanJson, type JsonScan } from './json-scan.js';

export const toBase64 = (b: Uint8Array) => Buffer.from(b).toString('base64');

/**
 * `text` decoded if it is padded standard base64 (RFC 4648 §4), as Go's
 * encoding/json writes a []byte; null if it is not. Node's decoder skips what
 * is not base64 and stops at a `=`, so a text with any of that decodes to fewer
 * bytes than its length says; the URL alphabet it also takes is looked for
 * apart. No regex: the grouped pattern `^(?:[A-Za-z0-9+/]{4})*(…)?$` makes V8
 * push a backtrack entry per group, so a 2 MB blob held the event loop ~200 ms
 * (the built-in DA runs in the node's process) and grew malloc's heap by the
 * stack's megabytes, and past ~30 MB it threw "Maximum call stack size
 * exceeded"; this costs the decoding alone.
 */
export function strictBase64(text: string): Buffer | null {
  const length = strictBase64Length(text);
  if (length === null) return null;
  const bytes = Buffer.from(text, 'base64');
  return bytes.length === length ? bytes : null;
}

/**
 * strictBase64 decoding into `target` at `offset` rather than a new buffer (a
 * submission of thousands of blobs need not allocate one per blob): the number
 * of bytes written, or null if `text` is not padded standard base64. It writes
 * as Buffer.from does (into room for the length the text announces), so the two
 * accept the same texts. `target` must have that room: text.length / 4 * 3 bytes.
 */
export function strictBase64Into(text: string, target: Buffer, offset: number): number | null {
  const length = strictBase64Length(text);
  if (length === null) return null;
  if (target.length - offset < length) throw new RangeError(`strictBase64Into: ${length} bytes do not fit at ${offset} of ${target.length}`);
  return target.write(text, offset, length, 'base64') === length ? length : null;
}

/** The bytes a padded standard base64 `text` decodes to, by its length and padding; null when its length or a URL-alphabet character rules it out. */
function strictBase64Length(text: string): number | null {
  if (text.length % 4 !== 0 || text.includes('-') || text.includes('_')) return null;
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return (text.length / 4) * 3 - padding;
}
export const toHex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/**
 * JSON.parse that keeps integers beyond 2^53 exact by turning them into strings
 * (which proto3 JSON readers accept for 64-bit fields). The node writes 64-bit
 * integers as JSON numbers, and nanosecond times are larger than a double holds.
 */
export function parseJsonExact(text: string): unknown {
  let out = '';
  let last = 0;
  scanJson(text, {
    number: (start, end) => {
      const token = text.slice(start, end);
      if (/^-?\d{16,}$/.test(token) && !Number.isSafeInteger(Number(token))) {
        out += text.slice(last, start) + `"${token}"`;
        last = end;
      }
    },
  });
  return JSON.parse(out + text.slice(last));
}

/** Significant digits a number is shown to a person with (the dashboard, text logs); JSON keeps it exact. */
const PEOPLE_DIGITS = 4;

/** A number rounded as a person reads it: 0.00205134 → 0.002051, 1234567 → 1235000; up to 4 digits unchanged. */
export const roundForPeople = (n: number): number => Number(n.toPrecision(PEOPLE_DIGITS));
export { Backoff, backoffDelay, retry, type BackoffPolicy, type RetryFailure, type RetryOptions } from './retry.js';
export { builtFile, packageRoot } from './package.js';
export { systemClock, type Clock } from './clock.js';
