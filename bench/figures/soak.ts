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

type Point = { x: number; y: number };
type Fit = { slope: number; stdErr: number };

/** "min–max MB, last MB at the end" of a series of samples. */
function range(points: Point[]): string {
  const ys = points.map((p) => p.y);
  return `${Math.min(...ys).toFixed(0)}–${Math.max(...ys).toFixed(0)} MB, ${ys.at(-1)?.toFixed(0)} MB at the end`;
}

/**
 * Least-squares slope of y over x, with its standard error: the heap grows and
 * shrinks by tens of MB between collections, so an 8-minute fit of a flat RSS
 * can still read a few MB/min either way, and the note says how far.
 */
function slope(points: Point[]): Fit {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const sxy = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  const b = sxy / sxx;
  const residuals = points.reduce((s, p) => s + (p.y - my - b * (p.x - mx)) ** 2, 0);
  return { slope: b, stdErr: Math.sqrt(residuals / (n - 2) / sxx) };
}

/**
 * Samples a process's resident memory every RSS_EVERY_MS, in its two parts
 * (minutes since `start`, MB): RssAnon, its own memory (the JS heap, malloc's
 * arenas, LevelDB's memtables and block cache), which is what a leak grows;
 * and RssFile, the pages of files it maps (node's binary, and the table files
 * LevelDB reads through mmap), page cache the kernel may drop at any time.
 */
function sampleResident(pid: number, start: number): { anon: Point[]; file: Point[]; total: Point[]; stop: () => void } {
  const [anon, file, total]: [Point[], Point[], Point[]] = [[], [], []];
  const timer = setInterval(() => {
    const x = (performance.now() - start) / MINUTE_MS;
    anon.push({ x, y: residentMb(pid, 'RssAnon') });
    file.push({ x, y: residentMb(pid, 'RssFile') });
    total.push({ x, y: residentMb(pid) });
  }, RSS_EVERY_MS);
  return { anon, file, total, stop: () => clearInterval(timer) };
}

/**
 * The soak's length in minutes and what set it: 10, 2 with --quick, or
 * BENCH_SOAK_MINUTES (a longer soak shows whether a slope levels off, a
 * warm-up, or keeps on, a leak).
 */
function soakMinutes(opts: BenchOptions): { minutes: number; setBy: string } {
  const env = process.env.BENCH_SOAK_MINUTES;
  if (env === undefined || env === '') return opts.quick ? { minutes: 2, setBy: '--quick' } : { minutes: 10, setBy: '' };
  const minutes = Number(env);
  if (!Number.isInteger(minutes) || minutes < 2)
    throw new Error(`BENCH_SOAK_MINUTES must be a whole number of minutes, at least 2, not ${JSON.stringify(env)}`);
  return { minutes, setBy: 'BENCH_SOAK_MINUTES' };
}

export const soak: Bench = {
  name: 'soak',
  description: `Soak: 10 minutes (--quick: 2; BENCH_SOAK_MINUTES=N: N) of ${RATE} tx/s on a spawned devnet (block_time ${BLOCK_TIME_MS} ms, built-in DA): resident memory slope and p99 commit latency, last minute vs first`,
  async run(opts: BenchOptions, scope: Scope) {
    const { minutes, setBy } = soakMinutes(opts);
    // The slope is fitted over the last 8 of 10 minutes (the last 80% of any other length): the first two hold start-up and the caches filling.
    const fittedMinutes = minutes * 0.8;
    const devnet = await startDevnet(scope, { blockTimeMs: BLOCK_TIME_MS, daBlockTimeMs: DA_BLOCK_TIME_MS });
    // The baseline: an idle node process over the same minutes, on the same machine (its slope is the noise floor).
    const idle = scope.spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
    const start = performance.now();
    const resident = sampleResident(devnet.child.pid!, start);
    const idleResident = sampleResident(idle.pid!, start);
    scope.defer(() => (resident.stop(), idleResident.stop()));
    const result = await postOpenLoop({ origin: devnet.rpc, ratePerSecond: RATE, durationMs: minutes * MINUTE_MS, txBytes: TX_BYTES, tag: 'soak' });
    resident.stop();
    idleResident.stop();
    const offered = offeredLoad(result);
    const fitted = (points: Point[]) => slope(points.filter((p) => p.x >= minutes - fittedMinutes));
    const [anonFit, fileFit, idleAnonFit, idleFileFit] = [resident.anon, resident.file, idleResident.anon, idleResident.file].map(fitted) as [
      Fit,
      Fit,
      Fit,
      Fit,
    ];
    const commitMs = (minute: number) =>
      result.txs.filter((t) => t.sentAt - start >= minute * MINUTE_MS && t.sentAt - start < (minute + 1) * MINUTE_MS).map((t) => t.commitMs);
    const p99ByMinute = Array.from({ length: minutes }, (_, m) => percentile(commitMs(m), 99));
    const span = setBy ? `${minutes} min (${setBy}; the full figure is 10 min)` : `${minutes} min`;
    const how =
      `One round: a spawned \`noded start --dev\` (fresh home, kv, block_time ${BLOCK_TIME_MS} ms, posting to its built-in DA with a block every ${DA_BLOCK_TIME_MS} ms) ` +
      `takes ${RATE} tx/s of ${TX_BYTES} B POST /tx?wait=commit, open-loop from a worker thread, for ${span}; ${result.txs.length} txs committed, ${offered.note}, ${senderStalls(result)}.`;
    const fit = (f: Fit) => `${f.slope.toFixed(2)} ± ${f.stdErr.toFixed(2)} MB/min`;
    const baselineNote = `Baseline: the same fit of an idle \`node -e "setInterval(()=>{},1000)"\` spawned beside it.`;
    return [
      row(
        `Soak ${span}: anonymous resident memory (RssAnon) slope, last ${fittedMinutes} min`,
        'MB/min',
        { noded: sample([anonFit.slope]), baseline: sample(opts.nodedOnly ? [] : [idleAnonFit.slope]) },
        { nodedAtMost: 1 },
        `${how} RssAnon of /proc/<pid>/status every ${RSS_EVERY_MS / 1000} s (${range(resident.anon)}), least-squares slope over the last ${fittedMinutes} min ` +
          `(standard error ±${anonFit.stdErr.toFixed(2)} MB/min taking the samples as independent; they are not: V8 lets its heap grow ~100 MB past the ~50 MB live between major GCs, and malloc keeps the Buffers freed by each, so RssAnon swings ±30 MB over cycles of a minute or so). ` +
          `RssAnon, the process's own memory, is what a leak grows; VmRSS (what ps and top show: ${range(resident.total)}, slope ${fit(fitted(resident.total))}) adds RssFile, the next row. ${baselineNote}`,
      ),
      row(
        `Soak ${span}: file-backed resident memory (RssFile) slope, last ${fittedMinutes} min`,
        'MB/min',
        { noded: sample([fileFit.slope]), baseline: sample(opts.nodedOnly ? [] : [idleFileFit.slope]) },
        null,
        `The same run, RssFile (${range(resident.file)}): pages of mapped files, node's binary and libraries, and the LevelDB table files LevelDB reads through mmap. ` +
          `It grows with the store (each new table's index and filter pages) and jumps while a compaction reads its inputs: page cache, which the kernel drops under memory pressure, so no target. ${baselineNote}`,
      ),
      commitRow(
        row(
          `Soak ${span}: commit p99, last minute`,
          'ms',
          { noded: sample([p99ByMinute.at(-1)!]), baseline: sample(opts.nodedOnly ? [] : [p99ByMinute[0]!]) },
          { ratioAtMost: 1.2 },
          `${how} p99 of the send-to-committed time of the txs sent in the last minute; each minute's: ${p99ByMinute.map((ms) => ms.toFixed(0)).join(', ')} ms. ` +
            `Baseline: the same of the first minute, which holds the node's start-up (code not yet optimised, the heap and LevelDB's first tables growing). ` +
            `A later minute's p99 follows the node's stalls: major GC pauses (tens of ms; more on a starved host), and above all the host's CPU pressure: a minute in which the node fell behind shows in its p99 and in the sends dropped.`,
        ),
        offered.kept,
      ),
    ];
  },
};
