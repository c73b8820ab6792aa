/**
 * The open-loop sender (postOpenLoop in open-loop.ts), run in a worker thread:
 * its event loop is not the bench's (the node watch, the harness), so a stall
 * there does not hold a send or an answer's time stamp. Its own loop delay is
 * measured and reported, since a stall here is still charged to the txs.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { Pool } from 'undici';
import { CONNECTIONS, type OpenLoopSpec, type SenderReport } from './open-loop.js';

const spec = workerData as OpenLoopSpec;
const pool = new Pool(spec.origin, { connections: CONNECTIONS, pipelining: 1 });
const total = Math.round((spec.ratePerSecond * spec.durationMs) / 1000);
// One slot per send: NaN until answered with 200. Transferred, not copied, to the bench: a soak sends over a million.
const sentAt = new Float64Array(total).fill(Number.NaN);
const commitMs = new Float64Array(total).fill(Number.NaN);
const height = new Float64Array(total).fill(Number.NaN);
let refused = 0;
let firstRefusal: string | undefined;
let dropped = 0;
const refuse = (what: string) => {
  refused++;
  firstRefusal ??= what;
};
const tx = (i: number) => {
  const bytes = Buffer.alloc(spec.txBytes, 'v');
  bytes.write(`${spec.tag}-${i}=`);
  return bytes;
};
const post = async (i: number) => {
  const body = tx(i);
  const at = performance.now();
  try {
    const res = await pool.request({ path: '/tx?wait=commit', method: 'POST', body });
    const text = await res.body.text();
    if (res.statusCode !== 200) return refuse(`HTTP ${res.statusCode} ${text}`);
    commitMs[i] = performance.now() - at;
    sentAt[i] = at;
    height[i] = (JSON.parse(text) as { height: number }).height;
  } catch (err) {
    refuse((err as Error).message);
  }
};
// Only the unanswered ones are held.
const inFlight = new Set<Promise<void>>();
const send = (i: number) => {
  // A node that falls behind would otherwise pile up an unbounded queue in this client (and a run that never
  // ends): past CONNECTIONS unanswered, a send is counted as dropped instead.
  if (inFlight.size >= CONNECTIONS) {
    dropped++;
    return;
  }
  const p = post(i).finally(() => inFlight.delete(p));
  inFlight.add(p);
};

const loopDelay = monitorEventLoopDelay({ resolution: 1 });
loopDelay.enable();
const start = performance.now();
let sent = 0;
while (sent < total) {
  // Every tx due by now goes out at once; a timer of 1 ms between looks keeps the schedule within a few ms.
  const due = Math.min(total, Math.floor(((performance.now() - start) * spec.ratePerSecond) / 1000) + 1);
  for (; sent < due; sent++) send(sent);
  await new Promise((resolve) => setTimeout(resolve, 1));
}
await Promise.all([...inFlight]);
loopDelay.disable();
await pool.close();
const report: SenderReport = {
  timeOrigin: performance.timeOrigin,
  sentAt,
  commitMs,
  height,
  refused,
  firstRefusal,
  dropped,
  // The histogram is in ns and counts the timer's own 1 ms resolution: what is over it is the stall.
  loopDelayP99Ms: Math.max(0, loopDelay.percentile(99) / 1e6 - 1),
  loopDelayMaxMs: Math.max(0, loopDelay.max / 1e6 - 1),
};
parentPort!.postMessage(report, [sentAt.buffer, commitMs.buffer, height.buffer]);
