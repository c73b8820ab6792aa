import { cpSync } from 'node:fs';
import { loadavg } from 'node:os';
import { daNamespace } from '../../src/config/index.js';
import { blobCommitment, DaClient, submitOptions, type Blob } from '../../src/da/index.js';
import type { Node } from '../../src/node/index.js';
import type { Bench, BenchOptions } from '../lib/figure.js';
import { startDaProcess, type SyncDa } from '../lib/chain.js';
import { createAggregatorHome, makeTxs, openNode, produceFullBlocks, startProducing, txFeeder, until } from '../lib/node.js';
import { row, type Row } from '../lib/report.js';
import { interleave, median, sample } from '../lib/rounds.js';
import { Scope } from '../lib/scope.js';

const TXS_PER_BLOCK = 10;
const TX_BYTES = 100;
const DA_BLOCK_MS = 100;
const DA_LATENCY_MS = 50;
const DA_FLAGS = { 'da.block_time': `${DA_BLOCK_MS}ms` };
/** What the submitter sends with the default gas settings (the DA node estimates under its default cap). */
const TX_CONFIG = submitOptions({ gasPrice: -1, maxGasPrice: 0 });

/** The namespace the DA's warm-up blobs are posted in: not the chain's, so the node's start-up search of DA finds none of them. */
const WARM_UP_NAMESPACE = daNamespace('bench-submitter-warm-up');

/**
 * The built-in DA with `delayMs` added to every request, in its own process
 * (as a DA node is: in this one, its handling of each 2 MB submission waited
 * behind the node's work on the same event loop, and a submission handled
 * after the seal waits a whole DA block more), stopped when the round ends.
 * A fresh process is cold: its first submissions took long enough to miss
 * their DA block even from a bare client (7,858 → 11,116 blocks/s from the
 * first pass of the same batches to the second). So `warmUp`'s batches are
 * posted first, in WARM_UP_NAMESPACE and without the delay, as a long-running
 * DA node has handled many before.
 */
async function daWithLatency(scope: Scope, delayMs: number, warmUp: Blob[][]): Promise<SyncDa & { close: () => Promise<void> }> {
  const round = new Scope();
  scope.defer(() => round.close());
  const da = await startDaProcess(round, DA_BLOCK_MS);
  const client = new DaClient({ address: da.address, authToken: '', requestTimeoutMs: 120_000 });
  try {
    for (const blobs of warmUp) {
      const moved = blobs.map((b) => ({ namespace: WARM_UP_NAMESPACE, data: b.data, commitment: blobCommitment(WARM_UP_NAMESPACE, b.data) }));
      await client.submit(moved, TX_CONFIG);
    }
  } finally {
    await client.close();
  }
  await da.setFaults({ delayMs });
  // Stopped when the round ends: a DA left running seals a block every 100 ms, on the cores the next rounds use.
  return { address: da.address, close: () => round.close() };
}

/** An aggregator's home holding `blocks` full blocks that never reached DA (it posted to a closed port). */
async function backlogHome(scope: Scope, blocks: number): Promise<string> {
  const home = scope.tempDir('noded-bench-submitter-backlog-');
  createAggregatorHome(home);
  const node = await openNode(home, { 'node.block_time': '1ms' });
  try {
    await produceFullBlocks(node, blocks, TXS_PER_BLOCK, TX_BYTES, 'backlog');
  } finally {
    await node.close();
  }
  return home;
}

/** A side's rate over a backlog, and the CPU this process spent meanwhile (all threads: the DA server's, the signing threads'). */
interface Posting {
  blocksPerSecond: number;
  /** CPU ms per 1,000 blocks. */
  cpuMs: number;
  /** The DA heights of the answers, in the order they came. */
  heights: bigint[];
}

/** Measures from `start()` (the clock and this process's CPU) to `end(blocks)`. */
function timing(): { start: () => void; end: (blocks: number, heights: bigint[]) => Posting } {
  let at = 0;
  let cpu = process.cpuUsage();
  return {
    start: () => {
      at = performance.now();
      cpu = process.cpuUsage();
    },
    end: (blocks, heights) => {
      const used = process.cpuUsage(cpu);
      return { blocksPerSecond: blocks / ((performance.now() - at) / 1000), cpuMs: (used.user + used.system) / 1000 / (blocks / 1000), heights };
    },
  };
}

/** Every batch of blobs the node's DA client submits and the DA heights of the answers; `onFirst` is called as it sends the first. */
function captureSubmissions(node: Node, onFirst: () => void): { batches: Blob[][]; heights: bigint[] } {
  const batches: Blob[][] = [];
  const heights: bigint[] = [];
  const client = node.c.da;
  const submit = client.submit.bind(client);
  client.submit = async (blobs, config, signal) => {
    if (batches.push(blobs) === 1) onFirst();
    const height = await submit(blobs, config, signal);
    heights.push(height);
    return height;
  };
  return { batches, heights };
}

/** How many answers came how many DA blocks after the one before (for successive batches: the DA blocks each took), e.g. "1×40 2×9". */
function daBlockSteps(heights: bigint[][]): string {
  const steps = new Map<bigint, number>();
  for (const h of heights) for (let i = 1; i < h.length; i++) steps.set(h[i]! - h[i - 1]!, (steps.get(h[i]! - h[i - 1]!) ?? 0) + 1);
  return (
    [...steps]
      .sort((a, b) => Number(a[0] - b[0]))
      .map(([step, n]) => `${step}×${n}`)
      .join(' ') || '–'
  );
}

/**
 * Blocks/s the real submitter posts: a copy of the backlog home started as an
 * aggregator in lazy mode (so it makes no new blocks), timed from its first
 * submission until every stored block is on DA. Start-up is left out: with no
 * cache in the home it first searches DA for blocks an earlier run may have
 * posted. `capture` receives the batches it submitted.
 */
async function postBacklog(scope: Scope, backlog: string, delayMs: number, warmUp: Blob[][], capture?: (batches: Blob[][]) => void): Promise<Posting> {
  const home = scope.tempDir('noded-bench-submitter-');
  cpSync(backlog, home, { recursive: true });
  const da = await daWithLatency(scope, delayMs, warmUp);
  const node = await openNode(home, { 'node.lazy_mode': true, 'node.lazy_block_interval': '1h', 'da.address': da.address, ...DA_FLAGS });
  try {
    const time = timing();
    const submissions = captureSubmissions(node, time.start);
    const blocks = node.store.height();
    const posted = until(() => node.store.daIncludedHeight() >= blocks, 120_000, `${blocks} blocks on DA`);
    await Promise.race([posted, startProducing(node)]);
    const posting = time.end(Number(blocks), submissions.heights);
    capture?.(submissions.batches);
    return posting;
  } finally {
    await node.close();
    await da.close();
  }
}

/** The floor: a bare DA client submitting the same batches one after the other, nothing else. */
async function postRaw(scope: Scope, batches: Blob[][], delayMs: number): Promise<Posting> {
  const da = await daWithLatency(scope, delayMs, batches);
  const client = new DaClient({ address: da.address, authToken: '', requestTimeoutMs: 120_000 });
  try {
    const blocks = batches.reduce((n, blobs) => n + blobs.length / 2, 0);
    const time = timing();
    time.start();
    const heights: bigint[] = [];
    for (const blobs of batches) heights.push(await client.submit(blobs, TX_CONFIG));
    return time.end(blocks, heights);
  } finally {
    await client.close();
    await da.close();
  }
}

/** Least-squares slope of y over x. */
function slope(points: Array<[number, number]>): number {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return sxy / sxx;
}

/**
 * An aggregator making a block of 10 txs every 100 ms, posting to the built-in
 * DA with 50 ms added to every request: after a warm-up, `rounds` windows of
 * `windowMs`, each giving how fast the pending count (blocks produced, not yet
 * on DA) grows, sampled every block time, and the production rate.
 */
async function pendingGrowth(
  scope: Scope,
  rounds: number,
  windowMs: number,
  warmUp: Blob[][],
): Promise<{ growth: number[]; production: number[]; maxPending: number }> {
  const home = scope.tempDir('noded-bench-submitter-pending-');
  createAggregatorHome(home);
  const da = await daWithLatency(scope, DA_LATENCY_MS, warmUp);
  const node = await openNode(home, { 'node.block_time': '100ms', 'da.address': da.address, ...DA_FLAGS });
  scope.defer(() => node.close());
  let batch = 0;
  const feeder = txFeeder(node);
  const feed = () => feeder.feed(makeTxs(TXS_PER_BLOCK, TX_BYTES, `pending${batch++}`));
  node.chain.onBlock(feed);
  feed();
  const fatal = Promise.race([startProducing(node), feeder.failed]);
  const pending = () => Number(node.store.height() - node.store.daIncludedHeight());
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  await Promise.race([sleep(2_000), fatal]);
  const growth: number[] = [];
  const production: number[] = [];
  let maxPending = 0;
  for (let r = 0; r < rounds; r++) {
    const start = performance.now();
    const heightBefore = node.store.height();
    const points: Array<[number, number]> = [];
    while (performance.now() - start < windowMs) {
      points.push([(performance.now() - start) / 1000, pending()]);
      maxPending = Math.max(maxPending, pending());
      await Promise.race([sleep(100), fatal]);
    }
    growth.push(slope(points));
    production.push(Number(node.store.height() - heightBefore) / ((performance.now() - start) / 1000));
  }
  return { growth, production, maxPending };
}

export const submitter: Bench = {
  name: 'submitter',
  description: 'DA submitter blocks/s posted to the built-in DA at 0 and 50 ms latency vs a bare client; pending growth at 100 ms blocks with 50 ms DA latency',
  async run(opts: BenchOptions, scope: Scope) {
    // Pairs of throughput rounds: a round takes a few seconds, and the host's load moves between them.
    const { blocks, pairs, rounds, windowMs } = opts.quick
      ? { blocks: 2_000, pairs: 2, rounds: 2, windowMs: 5_000 }
      : { blocks: 10_000, pairs: 5, rounds: 3, windowMs: 10_000 };
    const backlog = await backlogHome(scope, blocks);
    // A warm-up run gives the JIT its turn and the bare client its batches: the very ones the submitter formed.
    let batches: Blob[][] = [];
    await postBacklog(scope, backlog, 0, [], (b) => (batches = b));
    const rows: Row[] = [];
    for (const delayMs of [0, DA_LATENCY_MS]) {
      const cpu = { noded: [] as number[], baseline: [] as number[] };
      const heights = { noded: [] as bigint[][], baseline: [] as bigint[][] };
      const rate = (side: keyof typeof cpu, post: () => Promise<Posting>) => async () => {
        const posting = await post();
        cpu[side].push(posting.cpuMs);
        heights[side].push(posting.heights);
        return posting.blocksPerSecond;
      };
      const loadBefore = loadavg()[0]!;
      const paired = await interleave(
        pairs,
        { baseline: rate('baseline', () => postRaw(scope, batches, delayMs)), noded: rate('noded', () => postBacklog(scope, backlog, delayMs, batches)) },
        { nodedOnly: opts.nodedOnly },
      );
      // interleave keeps a round's two sides at the same index.
      const ratios = paired.baseline.samples.map((b, i) => paired.noded.samples[i]! / b);
      const fixed = (n: number, digits: number) => n.toFixed(digits);
      rows.push(
        row(
          `Submitter throughput, DA +${delayMs} ms`,
          'blocks/s',
          paired,
          // Issue 19: at DA latency the submitter makes no round trip a bare client does not make.
          delayMs === DA_LATENCY_MS ? { ratioAtLeast: 0.9 } : null,
          `A backlog of ${blocks} blocks of ${TXS_PER_BLOCK} txs × ${TX_BYTES} B (made while DA was unreachable) posted by the real submitter of an aggregator started on a copy of that home, ` +
            `from its first submission (start-up's search of DA left out) until every block is on DA, in ${batches.length} batches of at most max_blob_size; the built-in DA, in its own process (noded da serve: a DA node is another process; until 2026-11-26 it ran in the node's, where its handling of each submission waited behind the node's work), a fresh one each round, warmed first with the same batches in another namespace without the delay (a cold one misses DA blocks even for a bare client), seals a block every ${DA_BLOCK_MS} ms and waits ${delayMs} ms before every request. ` +
            `Baseline: a bare DA client submitting the same batches one after the other to a fresh DA with the same settings (no store reads, no cache, no DA head lookup, and no signing). ` +
            `Each block's two blobs carry the proposer's signatures (the header's DA envelope and the data, as ev-node signs them at submission, block/internal/submitting/da_submitter.go): ` +
            `the aggregator made them with the backlog's blocks and kept them beside them (Bucket.daSignatures), so none is signed here; blocks without them are signed on a signing thread, two batches ahead of the one in flight. ` +
            `At DA +${DA_LATENCY_MS} ms a DA block is ${DA_BLOCK_MS} ms, and a submission sent as the last one's answer comes back is queued for the next some 80-115 ms after that answer's seal (2026-11-26, load 2-4, medians of rounds): ` +
            `the answer reaching the client and the next request reaching the DA 20-40 ms, the DA receiving its 2.7 MB of JSON 4-9 ms and checking it 4-8 ms, then the delay (the DA hashes and logs it after that, and its seal answers at once). ` +
            `Of the client's part, encoding a full batch's body is ~12 ms: the bare client does it after each answer, the submitter while the submission before is in flight (DaClient.prepareSubmit), which took its turn-around from 5-10 ms longer than the bare client's to ~1 ms. ` +
            `A few ms more decide whether a batch takes one DA block or two, and a side stays in one mode or the other for several batches: rounds move between about 5,500 and 11,000 blocks/s. ` +
            `CPU of the posting process (all threads: the node's signing thread too; the DA server's not) per 1,000 blocks, medians: noded ${fixed(median(cpu.noded), 0)} ms, baseline ${cpu.baseline.length ? fixed(median(cpu.baseline), 0) : '–'} ms. ` +
            `DA blocks between successive answers (a batch's DA blocks when one is in flight at a time), step×count over all rounds: noded ${daBlockSteps(heights.noded)}, baseline ${daBlockSteps(heights.baseline)}. ` +
            `Ratio of each pair of rounds: ${ratios.map((r) => fixed(r, 2)).join(', ') || '–'}; load average (1 min) ${fixed(loadBefore, 1)} before the rounds, ${fixed(loadavg()[0]!, 1)} after.`,
        ),
      );
    }
    const { growth, production, maxPending } = await pendingGrowth(scope, rounds, windowMs, batches);
    rows.push(
      row(
        `Pending blocks growth, 100 ms blocks, DA +${DA_LATENCY_MS} ms`,
        'blocks/s',
        { noded: sample(growth), baseline: sample(production) },
        { ratioAtMost: 0.1 },
        `An aggregator making a block of ${TXS_PER_BLOCK} txs every 100 ms and posting to the built-in DA (a DA block every ${DA_BLOCK_MS} ms, ${DA_LATENCY_MS} ms added to every request); ` +
          `after a 2 s warm-up, ${rounds} windows of ${windowMs / 1000} s: the least-squares slope of the pending count (produced, not yet on DA) sampled every 100 ms. ` +
          `Flat is a slope near 0; baseline: the production rate, the slope if nothing reached DA. Most blocks pending at any sample: ${maxPending}.`,
      ),
    );
    return rows;
  },
};
