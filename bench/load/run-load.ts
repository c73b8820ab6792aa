import { Worker } from 'node:worker_threads';
import type { LoadResult, LoadSpec } from './spec.js';

/** Runs the load worker against a server and returns the rate of good responses per second. */
export async function requestsPerSecond(spec: LoadSpec): Promise<number> {
  const result = await runLoad(spec);
  if (result.bad > 0) throw new Error(`${result.bad} bad responses from ${spec.origin}${spec.path}; first: ${result.firstBad}`);
  if (result.ok === 0) throw new Error(`no responses from ${spec.origin}${spec.path} in ${spec.durationMs}ms`);
  return result.ok / result.seconds;
}

function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const worker = new Worker(new URL('./worker.js', import.meta.url), { workerData: spec });
  return new Promise<LoadResult>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`load worker exited with ${code} before reporting`)));
  }).finally(() => worker.terminate());
}
