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

export const isAbortError = (err: unknown, signal: AbortSignal) => signal.aborted && err === signal.reason;

/** Current time as Unix nanoseconds. */
export const nowNanos = (): bigint => BigInt(Date.now()) * 1_000_000n;

export const toBase64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
export const toHex = (b: Uint8Array) => Buffer.from(b).toString('hex');
