/**
 * The load generator, run in a worker thread so it does not share the server's
 * event loop: the server and the client each get a core of their own.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Pool } from 'undici';
import type { LoadResult, LoadSpec } from './spec.js';

const spec = workerData as LoadSpec;
// pipelining 1: each connection carries one request at a time, as a keep-alive HTTP/1.1 client does.
const pool = new Pool(spec.origin, { connections: spec.connections, pipelining: 1 });

let measuring = false;
let stopped = false;
const result: LoadResult = { ok: 0, bad: 0, seconds: 0 };

function record(good: boolean, what: () => string): void {
  if (!measuring) return;
  if (good) result.ok++;
  else {
    result.bad++;
    result.firstBad ??= what();
  }
}

/** One connection's worth of load: the next request as soon as the last one's body is read. */
async function connectionLoop(): Promise<void> {
  while (!stopped) {
    try {
      const res = await pool.request({ path: spec.path, method: spec.method, headers: spec.headers, body: spec.body });
      // Read the whole body: a server is only done with a request once the client has it.
      const bytes = await res.body.arrayBuffer();
      record(res.statusCode === 200 && bytes.byteLength === spec.expectBytes, () => `HTTP ${res.statusCode}, ${bytes.byteLength} bytes`);
    } catch (err) {
      record(false, () => (err as Error).message);
    }
  }
}

const loops = Array.from({ length: spec.connections }, connectionLoop);
let start = 0;
setTimeout(() => {
  measuring = true;
  start = performance.now();
}, spec.warmupMs);
setTimeout(() => {
  measuring = false;
  stopped = true;
  result.seconds = (performance.now() - start) / 1000;
}, spec.warmupMs + spec.durationMs);

await Promise.all(loops);
await pool.close();
parentPort!.postMessage(result);
