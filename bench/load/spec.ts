/** What the load worker runs: one request, repeated on every connection for a fixed time. */
export interface LoadSpec {
  origin: string;
  path: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body: string;
  connections: number;
  /** Requests answered during the warm-up are not counted (JIT, connection set-up). */
  warmupMs: number;
  durationMs: number;
  /** A response counts only if it is 200 with exactly this many body bytes. */
  expectBytes: number;
}

export interface LoadResult {
  /** 200 responses of the expected length completed inside the measured window. */
  ok: number;
  /** Anything else completed inside the window (status, length or transport error). */
  bad: number;
  /** The first bad response, to say what went wrong. */
  firstBad?: string;
  seconds: number;
}
