import type { Bench, BenchOptions } from '../lib/figure.js';
import { startDevnet } from '../lib/devnet.js';
import { residentMb } from '../lib/process.js';
import { row } from '../lib/report.js';
import { sample } from '../lib/rounds.js';
import type { Scope } from '../lib/scope.js';
import { percentile, postOpenLoop } from '../load/open-loop.js';
import { commitRow, offeredLoad, senderStalls } from './latency.js';

const BLOCK_TIME_MS = 100;
const DA_BLOCK_TIME_MS = 1_000;
const RATE = 2_000;
const TX_BYTES = 100;
const RSS_EVERY_MS = 5_000;
const MINUTE_MS = 60_000;

/**
 * Least-squares slope of y over x, with its standard error: the heap grows and
 * shrinks by tens of MB between collections, so an 8-minute fit of a flat RSS
 * can still read a few MB/min either way, and the note says how far.
 */
function slope(points: Array<{ x: number; y: number }>): { slope: number; stdErr: number } {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const sxy = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  const b = sxy / sxx;
  const residuals = points.reduce((s, p) => s + (p.y - my - b * (p.x - mx)) ** 2, 0);
  return { slope: b, stdErr: Math.sqrt(residuals / (n - 2) / sxx) };
}

/** Samples a process's resident memory every RSS_EVERY_MS: minutes since `start`, MB. */
function sampleRss(pid: number, start: number): { points: Array<{ x: number; y: number }>; stop: () => void } {
  const points: Array<{ x: number; y: number }> = [];
  const timer = setInterval(() => points.push({ x: (performance.now() - start) / MINUTE_MS, y: residentMb(pid) }), RSS_EVERY_MS);
  return { points, stop: () => clearInterval(timer) };
}

export const soak: Bench = {
  name: 'soak',
  description: `Soak: 10 minutes (--quick: 2) of ${RATE} tx/s on a spawned devnet (block_time ${BLOCK_TIME_MS} ms, built-in DA): resident memory slope and p99 commit latency, last minute vs first`,
  async run(opts: BenchOptions, scope: Scope) {
    const minutes = opts.quick ? 2 : 10;
    // The slope is fitted over the last 8 of 10 minutes: the first two hold start-up and the caches filling.
    const fittedMinutes = opts.quick ? 1.6 : 8;
    const devnet = await startDevnet(scope, { blockTimeMs: BLOCK_TIME_MS, daBlockTimeMs: DA_BLOCK_TIME_MS });
    // The baseline: an idle node process over the same minutes, on the same machine (its slope is the noise floor).
    const idle = scope.spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
    const start = performance.now();
    const rss = sampleRss(devnet.child.pid!, start);
    const idleRss = sampleRss(idle.pid!, start);
    scope.defer(() => (rss.stop(), idleRss.stop()));
    const result = await postOpenLoop({ origin: devnet.rpc, ratePerSecond: RATE, durationMs: minutes * MINUTE_MS, txBytes: TX_BYTES, tag: 'soak' });
    rss.stop();
    idleRss.stop();
    const offered = offeredLoad(result);
    const fitted = (points: Array<{ x: number; y: number }>) => slope(points.filter((p) => p.x >= minutes - fittedMinutes));
    const [nodeFit, idleFit] = [fitted(rss.points), fitted(idleRss.points)];
    const p99Between = (fromMs: number, toMs: number) =>
      percentile(
        result.txs.filter((t) => t.sentAt - start >= fromMs && t.sentAt - start < toMs).map((t) => t.commitMs),
        99,
      );
    const first = p99Between(0, MINUTE_MS);
    const last = p99Between((minutes - 1) * MINUTE_MS, minutes * MINUTE_MS);
    const span = opts.quick ? `${minutes} min (--quick; the full figure is 10 min)` : `${minutes} min`;
    const rssPoints = rss.points.map((p) => p.y);
    const how =
      `One round: a spawned \`noded start --dev\` (fresh home, kv, block_time ${BLOCK_TIME_MS} ms, posting to its built-in DA with a block every ${DA_BLOCK_TIME_MS} ms) ` +
      `takes ${RATE} tx/s of ${TX_BYTES} B POST /tx?wait=commit, open-loop from a worker thread, for ${span}; ${result.txs.length} txs committed, ${offered.note}, ${senderStalls(result)}.`;
    return [
      row(
        `Soak ${span}: resident memory slope, last ${fittedMinutes} min`,
        'MB/min',
        { noded: sample([nodeFit.slope]), baseline: sample(opts.nodedOnly ? [] : [idleFit.slope]) },
        { nodedAtMost: 1 },
        `${how} VmRSS every ${RSS_EVERY_MS / 1000} s (${Math.min(...rssPoints).toFixed(0)}–${Math.max(...rssPoints).toFixed(0)} MB, ${rssPoints.at(-1)?.toFixed(0)} MB at the end), ` +
          `least-squares slope over the last ${fittedMinutes} min (standard error ±${nodeFit.stdErr.toFixed(2)} MB/min, taking the samples as independent: GC cycles make it larger). Baseline: the same fit of an idle \`node -e "setInterval(()=>{},1000)"\` spawned beside it.`,
      ),
      commitRow(
        row(
          `Soak ${span}: commit p99, last minute`,
          'ms',
          { noded: sample([last]), baseline: sample(opts.nodedOnly ? [] : [first]) },
          { ratioAtMost: 1.2 },
          `${how} p99 of the send-to-committed time of the txs sent in the last minute. Baseline: the same of the first minute.`,
        ),
        offered.kept,
      ),
    ];
  },
};
