import type { Bench, BenchOptions } from '../lib/figure.js';
import { NodeWatch, startDevnet } from '../lib/devnet.js';
import { until } from '../lib/node.js';
import { row, type Row } from '../lib/report.js';
import { sample } from '../lib/rounds.js';
import type { Scope } from '../lib/scope.js';
import { CONNECTIONS, percentile, postOpenLoop, type OpenLoopResult } from '../load/open-loop.js';

const BLOCK_TIME_MS = 100;
const DA_BLOCK_TIME_MS = 1_000;
const RATE = 1_000;
const TX_BYTES = 100;
/** How often the watch reads /node_info: the DA times are within half of it. */
const WATCH_EVERY_MS = 50;

/** More than this share of the sends refused or dropped, and the node did not take the offered load. */
const MAX_LOST_SHARE = 0.001;

/** The sender's own stalls and the host's CPU pressure, for the note: they add to the txs' times though they are not the node's. */
export function senderStalls(result: OpenLoopResult): string {
  const { p99Ms, maxMs } = result.senderLoopDelay;
  const pressure = result.cpuPressure === null ? '' : `, host CPU pressure ${(result.cpuPressure * 100).toFixed(0)}%`;
  return `sender loop delay p99 ${p99Ms.toFixed(1)} ms, max ${maxMs.toFixed(0)} ms${pressure}`;
}

/** Whether the node took the offered load (its commit rows are then missed whatever their values), and how many sends it lost, for the note. */
export function offeredLoad(result: OpenLoopResult): { kept: boolean; note: string } {
  const sent = result.txs.length + result.refused + result.dropped;
  const kept = result.refused + result.dropped <= sent * MAX_LOST_SHARE;
  const parts = [
    result.refused ? `${result.refused} refused (first: ${result.firstRefusal})` : '',
    result.dropped ? `${result.dropped} dropped: ${CONNECTIONS} requests were unanswered, the node behind` : '',
  ].filter(Boolean);
  const lost = parts.length ? `of ${sent} sends ${parts.join(', ')}` : 'no send refused or dropped';
  return { kept, note: kept ? lost : `NODE DID NOT KEEP UP (missed): ${lost}` };
}

/** A commit-latency row, missed when the node did not take the offered load (the lost sends would have been its slowest). */
export function commitRow(r: Row, kept: boolean): Row {
  return kept || r.met === null ? r : { ...r, met: false };
}

export const latency: Bench = {
  name: 'latency',
  description: `Tx latency on a spawned devnet (block_time ${BLOCK_TIME_MS} ms, built-in DA ${DA_BLOCK_TIME_MS} ms) under ${RATE} tx/s of POST /tx: to the block committed and to it on DA`,
  async run(opts: BenchOptions, scope: Scope) {
    const { rounds, roundMs } = opts.quick ? { rounds: 3, roundMs: 10_000 } : { rounds: 5, roundMs: 30_000 };
    const devnet = await startDevnet(scope, { blockTimeMs: BLOCK_TIME_MS, daBlockTimeMs: DA_BLOCK_TIME_MS });
    const watch = new NodeWatch(devnet.rpc, WATCH_EVERY_MS);
    scope.defer(() => watch.stop());
    const load = (tag: string, durationMs: number) => postOpenLoop({ origin: devnet.rpc, ratePerSecond: RATE, durationMs, txBytes: TX_BYTES, tag });
    // A warm-up at the same rate (JIT, connections, the first DA submissions), not counted.
    await load('warm', 3_000);
    const figures = { commitP50: [] as number[], commitP99: [] as number[], daP50: [] as number[], daP99: [] as number[], interval: [] as number[] };
    const losses: string[] = [];
    let kept = true;
    for (let i = 0; i < rounds; i++) {
      const from = performance.now();
      const result = await load(`r${i}`, roundMs);
      const offered = offeredLoad(result);
      losses.push(`${offered.note}, ${senderStalls(result)}`);
      kept &&= offered.kept;
      const interval = watch.blockIntervalMs(from, from + roundMs);
      const top = result.txs.reduce((max, t) => Math.max(max, t.height), 0);
      await until(() => watch.lastIncluded >= top, 60_000, `height ${top} on DA`);
      const commit = result.txs.map((t) => t.commitMs);
      const onDa = result.txs.map((t) => watch.includedAt(t.height) - t.sentAt);
      figures.commitP50.push(percentile(commit, 50));
      figures.commitP99.push(percentile(commit, 99));
      figures.daP50.push(percentile(onDa, 50));
      figures.daP99.push(percentile(onDa, 99));
      figures.interval.push(interval);
    }
    const blockInterval = sample(opts.nodedOnly ? [] : figures.interval);
    const daBlock = sample(opts.nodedOnly ? [] : figures.interval.map(() => DA_BLOCK_TIME_MS));
    const how =
      `A spawned \`noded start --dev\` (fresh home, kv, block_time ${BLOCK_TIME_MS} ms, built-in DA with a block every ${DA_BLOCK_TIME_MS} ms, free loopback ports) ` +
      `takes ${RATE} tx/s of ${TX_BYTES} B POST /tx?wait=commit, sent open-loop on a fixed schedule from up to ${CONNECTIONS} keep-alive connections by a worker thread of the bench (its own event loop, whose delay is given by round, with the share of the round in which a task on the host waited for a CPU, Linux PSI); ` +
      `${rounds} rounds of ${roundMs / 1000} s after a 3 s warm-up, the percentile of each round's txs, the median of the rounds (by round: ${losses.join('; ')}).`;
    const commitNote = `${how} Per tx: from the send to the answer, which comes once its block is committed. Baseline: the block interval the node kept in the round (GET /node_info every ${WATCH_EVERY_MS} ms).`;
    const daNote = `${how} Per tx: from the send to the time DA-included height (GET /node_info every ${WATCH_EVERY_MS} ms, midpoint of the looks before and after) reached its block. Baseline: the DA block time.`;
    return [
      commitRow(row('Tx to committed, p50', 'ms', { noded: sample(figures.commitP50), baseline: blockInterval }, { nodedAtMost: 60 }, commitNote), kept),
      commitRow(row('Tx to committed, p99', 'ms', { noded: sample(figures.commitP99), baseline: blockInterval }, { nodedAtMost: 150 }, commitNote), kept),
      row('Tx to on DA, p50', 'ms', { noded: sample(figures.daP50), baseline: daBlock }, null, daNote),
      row('Tx to on DA, p99', 'ms', { noded: sample(figures.daP99), baseline: daBlock }, null, daNote),
    ];
  },
};
