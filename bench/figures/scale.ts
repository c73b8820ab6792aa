import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { Client } from 'undici';
import type { LocalDa } from '../../src/da/index.js';
import { readHome } from '../../src/home/index.js';
import { GetBlockRequestSchema, GetBlockResponseSchema } from '../../src/types/index.js';
import {
  SYNC_DA_BLOCK_MS,
  SYNC_TX_BYTES,
  SYNC_TXS_PER_BLOCK,
  buildSyncChain,
  startFullNodeProcess,
  syncDaFlags,
  syncRate,
  type NodeProcess,
} from '../lib/chain.js';
import type { Bench, BenchOptions } from '../lib/figure.js';
import { buildLongChain, diskBytes, linkCopy, type LongChain } from '../lib/long-chain.js';
import { packageRoot, startLocalDa } from '../lib/node.js';
import { cpuPercent, cpuSeconds, residentMb, wallTimeMs } from '../lib/process.js';
import { row, type Row, type Target } from '../lib/report.js';
import { median, sample } from '../lib/rounds.js';
import { stopChild, type Scope } from '../lib/scope.js';

const SMALL_BLOCKS = 1_000;
/**
 * GetBlock calls a round makes of each node at each end of the chain: p99 is
 * the 80th slowest. Over 450 calls it was the 5th slowest, which one stall of
 * the shared machine more or less moved by half (1M/1k p99 ratios of 0.88 to
 * 1.53 from run to run with p50 equal).
 */
const GETBLOCK_READS = 8_000;
/** Distinct heights at each end of the chain those calls go through in turn: 1,000 blocks hold both ends and WARMUP_HEIGHTS apart. */
const GETBLOCK_HEIGHTS = 450;
/** Calls made first, unmeasured, of WARMUP_HEIGHTS heights from the chain's middle: a new process's first answers load and compile its code. */
const WARMUP_READS = 500;
const WARMUP_HEIGHTS = 100;
const PATH = '/node.v1.StoreService/GetBlock';
/**
 * Starts to ready a round makes of each chain's home, the chains taking turns
 * (ABBA…); the last of each stays up to be measured. Start-up is a second or
 * more of a new process loading its code, which the machine's other load
 * stretches by seconds from one start to the next.
 */
const STARTS = 3;
/**
 * `noded status` calls a round makes of each node, the nodes taking turns
 * (ABBA…): most of a call is a new process loading its code, which the
 * machine's other load slows by hundreds of ms from one call to the next.
 */
const STATUS_CALLS = 3;
/** A node using less of a core than this over a window is settled: no compaction of its store under way. */
const SETTLED_CPU_PERCENT = 5;
const SETTLE_WINDOW_MS = 500;
/** Longest wait for a node to settle; past it the figures are measured anyway. */
const SETTLE_LIMIT_MS = 120_000;

/** What one round measures of the nodes started on a chain's home. */
interface StartFigures {
  /** The median of its STARTS starts' wall time to ready. */
  startMs: number;
  /** CPU time (user and system, all threads) each of those starts used to get ready, in ms: what load does not change much. */
  startCpuMs: number[];
  /** From ready to settled (SETTLED_CPU_PERCENT). */
  settleMs: number;
  rssMb: number;
  /** The part of rssMb that is pages of mapped files (the node binary, LevelDB's tables). */
  rssFileMb: number;
  tipP50: number;
  tipP99: number;
  firstP50: number;
  firstP99: number;
  /** The median of its STATUS_CALLS calls. */
  statusMs: number;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * A client of one node's GetBlock: Connect's unary protocol in protobuf, as a
 * Connect client sends it, over one keep-alive connection, one call at a time.
 * Not the JSON of SPEC.md §4.1: the node keeps JSON answers by height
 * (BlockJsonCache), so a height asked again would not be read from the store.
 * Not gRPC, which ev-node's Go client speaks (pkg/rpc/client/client.go, the same
 * messages): Node's HTTP/2 client costs more than the node's answer (p50 1.2 ms
 * against 0.5 ms here), so the figure would measure the client.
 */
class GetBlockClient {
  private readonly client: Client;

  constructor(rpc: string) {
    this.client = new Client(rpc);
  }

  /** Latency (ms) of GetBlock of `height`, timed to the answer's last byte; checks that the answer is that block. */
  async call(height: number): Promise<number> {
    const body = toBinary(GetBlockRequestSchema, create(GetBlockRequestSchema, { identifier: { case: 'height', value: BigInt(height) } }));
    const start = performance.now();
    const res = await this.client.request({
      path: PATH,
      method: 'POST',
      headers: { 'content-type': 'application/proto', 'connect-protocol-version': '1' },
      body,
    });
    const bytes = new Uint8Array(await res.body.arrayBuffer());
    const ms = performance.now() - start;
    if (res.statusCode !== 200) throw new Error(`GetBlock ${height} answered ${res.statusCode}: ${Buffer.from(bytes).toString()}`);
    const answered = fromBinary(GetBlockResponseSchema, bytes).block?.header?.header?.height;
    if (answered !== BigInt(height)) throw new Error(`GetBlock ${height} answered the block at height ${answered}`);
    return ms;
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

/** Waits until `pid` uses less than SETTLED_CPU_PERCENT of a core over a window (at most SETTLE_LIMIT_MS); the ms it waited. */
async function settle(pid: number): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < SETTLE_LIMIT_MS && (await cpuPercent(pid, SETTLE_WINDOW_MS)) >= SETTLED_CPU_PERCENT);
  return performance.now() - start;
}

type Side = 'large' | 'small';

/** A node started on a copy of a chain's home. */
interface Started {
  chain: LongChain;
  home: string;
  node: NodeProcess;
  startMs: number;
  /** CPU time it used to get ready. */
  cpuMs: number;
}

/** Starts a copy of `chain`'s home (the node writes to its store) as a full node, timed to ready. */
async function startNode(scope: Scope, chain: LongChain): Promise<Started> {
  const home = linkCopy(scope, chain.home, 'noded-bench-scale-node-');
  const start = performance.now();
  const node = await startFullNodeProcess(scope, home, 'ready');
  return { chain, home, node, startMs: performance.now() - start, cpuMs: cpuSeconds(node.child.pid!) * 1000 };
}

/**
 * GetBlock latencies of each node: `reads` calls, going through the heights
 * `heightsOf` gives it in turn, the nodes taking turns call by call (`order`
 * first at even calls, last at odd ones): a stall of the shared machine falls
 * on either side alike, where series measured one after the other saw
 * different loads.
 */
async function alternateGetBlock(
  clients: Record<Side, GetBlockClient>,
  started: Record<Side, Started>,
  order: readonly Side[],
  reads: number,
  heightsOf: (chain: LongChain) => number[],
): Promise<Record<Side, number[]>> {
  const heights = { large: heightsOf(started.large.chain), small: heightsOf(started.small.chain) };
  const latencies: Record<Side, number[]> = { large: [], small: [] };
  const reversed = [...order].reverse();
  for (let i = 0; i < reads; i++) {
    for (const side of i % 2 === 0 ? order : reversed) latencies[side].push(await clients[side].call(heights[side][i % heights[side].length]!));
  }
  return latencies;
}

/** GetBlock latencies of both nodes at the tip and from height 1 (GETBLOCK_READS calls each), after WARMUP_READS calls from the chain's middle. */
async function measureGetBlock(started: Record<Side, Started>, order: readonly Side[]): Promise<Record<'tip' | 'first', Record<Side, number[]>>> {
  const clients = { large: new GetBlockClient(started.large.node.rpc), small: new GetBlockClient(started.small.node.rpc) };
  const calls = (reads: number, heightsOf: (chain: LongChain) => number[]) => alternateGetBlock(clients, started, order, reads, heightsOf);
  try {
    await calls(WARMUP_READS, (chain) => range(Math.floor(chain.blocks / 2) - WARMUP_HEIGHTS / 2 + 1, WARMUP_HEIGHTS));
    const tip = await calls(GETBLOCK_READS, (chain) => range(chain.blocks - GETBLOCK_HEIGHTS + 1, GETBLOCK_HEIGHTS));
    const first = await calls(GETBLOCK_READS, () => range(1, GETBLOCK_HEIGHTS));
    return { tip, first };
  } finally {
    await Promise.all([clients.large.close(), clients.small.close()]);
  }
}

/**
 * One round: starts a copy of each chain's home as a full node STARTS times,
 * the chains taking turns, `order` first, each timed to ready; with the last
 * two running, measures both: once both have settled (LevelDB compacts a
 * store just opened, on a background thread of the node: GetBlock measured
 * meanwhile would measure the compaction), resident memory after `idleMs`; GetBlock at
 * both ends of the chain (GETBLOCK_READS calls each), after WARMUP_READS calls
 * from its middle (the first answers of a new process pay for loading and
 * compiling its code, the same on both sides: left in, they were p99 at the
 * tip); `noded status` (STATUS_CALLS calls).
 * Both nodes run at once, each idle while the other answers, so that what
 * the machine's other load does to one it does to the other.
 */
async function measureRound(scope: Scope, chains: Record<Side, LongChain>, order: readonly Side[], idleMs: number): Promise<Record<Side, StartFigures>> {
  const starts: Record<Side, Started[]> = { large: [], small: [] };
  for (let i = 0; i < STARTS - 1; i++) {
    for (const side of i % 2 === 0 ? order : [...order].reverse()) {
      const node = await startNode(scope, chains[side]);
      starts[side].push(node);
      await stopChild(node.node.child);
    }
  }
  // The pair measured below: started in the order that continues the turns.
  const last = (STARTS - 1) % 2 === 0 ? order : [...order].reverse();
  const started: Partial<Record<Side, Started>> = {};
  try {
    for (const side of last) {
      started[side] = await startNode(scope, chains[side]);
      starts[side].push(started[side]);
    }
    const both = started as Record<Side, Started>;
    const settleMs = { large: 0, small: 0 };
    for (const side of order) settleMs[side] = await settle(both[side].node.child.pid!);
    await new Promise((resolve) => setTimeout(resolve, idleMs));
    const memory = (side: Side) => ({ rssMb: residentMb(both[side].node.child.pid!), rssFileMb: residentMb(both[side].node.child.pid!, 'RssFile') });
    const rss = { large: memory('large'), small: memory('small') };
    const { tip, first } = await measureGetBlock(both, order);
    const statusMs: Record<Side, number[]> = { large: [], small: [] };
    for (let call = 0; call < STATUS_CALLS; call++) {
      for (const side of call % 2 === 0 ? order : [...order].reverse()) {
        statusMs[side].push(await wallTimeMs(scope, [`${packageRoot()}bin/run.js`, 'status', '--home', both[side].home, '--node', both[side].node.rpc]));
      }
    }
    const figures = (side: Side): StartFigures => ({
      startMs: median(starts[side].map((s) => s.startMs)),
      startCpuMs: starts[side].map((s) => s.cpuMs),
      settleMs: settleMs[side],
      ...rss[side],
      tipP50: percentile(tip[side], 50),
      tipP99: percentile(tip[side], 99),
      firstP50: percentile(first[side], 50),
      firstP99: percentile(first[side], 99),
      statusMs: median(statusMs[side]),
    });
    return { large: figures('large'), small: figures('small') };
  } finally {
    for (const side of last) if (started[side]) await stopChild(started[side].node.child);
  }
}

/**
 * BENCH_SCALE_KEEP_DIR: where the chains are kept after a run, and taken from
 * by the next one instead of built again (a million blocks take minutes to
 * build). Each run measures copies of them, so they stay as built. Empty them
 * after changing how a chain is built or stored.
 */
const KEEP_DIR = 'BENCH_SCALE_KEEP_DIR';
/** In a chain's keep dir once it is complete: what LongChain says of it, but its home. */
const KEPT_FILE = 'chain.json';

/**
 * A chain of `blocks` blocks, and `syncBlocks` more produced on a copy of it
 * and posted to a built-in DA of its own: the next blocks a full node holding
 * the chain finds on DA. Taken from the keep dir (KEEP_DIR) when it is there.
 */
async function prepareChain(scope: Scope, blocks: number, syncBlocks: number): Promise<{ chain: LongChain; da: LocalDa }> {
  const keep = process.env[KEEP_DIR] ? join(process.env[KEEP_DIR], `${blocks}-${syncBlocks}`) : null;
  const kept = keep ? join(keep, KEPT_FILE) : null;
  if (keep && kept && existsSync(kept)) {
    process.stderr.write(`bench: scale: the chain of ${blocks.toLocaleString('en-US')} blocks kept in ${keep}\n`);
    const chain: LongChain = { ...(JSON.parse(readFileSync(kept, 'utf8')) as Omit<LongChain, 'home'>), home: join(keep, 'home') };
    return { chain, da: await startLocalDa(scope, SYNC_DA_BLOCK_MS, join(keep, 'da')) };
  }
  if (keep) rmSync(keep, { recursive: true, force: true }); // a build cut short
  process.stderr.write(`bench: scale: building a chain of ${blocks.toLocaleString('en-US')} blocks…\n`);
  const chain = await buildLongChain(scope, blocks, keep ? mkdirs(join(keep, 'home')) : undefined);
  const da = await startLocalDa(scope, SYNC_DA_BLOCK_MS, keep ? mkdirs(join(keep, 'da')) : undefined);
  await buildSyncChain(scope, da, syncBlocks, linkCopy(scope, chain.home, 'noded-bench-scale-agg-'));
  if (kept) {
    const { home: _home, ...rest } = chain;
    writeFileSync(kept, JSON.stringify(rest));
  }
  return { chain, da };
}

const mkdirs = (dir: string) => {
  mkdirSync(dir, { recursive: true });
  return dir;
};

export const scale: Bench = {
  name: 'scale',
  description: `Start-up, idle memory, GetBlock, status, DA sync and disk of a node holding a million blocks vs one holding 1,000 (${KEEP_DIR}=DIR keeps the chains built there for the next run)`,
  async run(opts: BenchOptions, scope: Scope) {
    const { largeBlocks, syncBlocks, rounds, idleMs } = opts.quick
      ? { largeBlocks: 100_000, syncBlocks: 2_000, rounds: 3, idleMs: 3_000 }
      : { largeBlocks: 1_000_000, syncBlocks: 10_000, rounds: 5, idleMs: 5_000 };
    const large = await prepareChain(scope, largeBlocks, syncBlocks);
    const small = await prepareChain(scope, SMALL_BLOCKS, syncBlocks);
    const figures = { large: [] as StartFigures[], small: [] as StartFigures[] };
    const synced = { large: [] as number[], small: [] as number[] };
    const chains = { large: large.chain, small: small.chain };
    for (let i = 0; i < rounds; i++) {
      // The other order every other round, so neither chain always goes first.
      const order = i % 2 === 0 ? (['small', 'large'] as const) : (['large', 'small'] as const);
      const round = await measureRound(scope, chains, order, idleMs);
      for (const side of order) figures[side].push(round[side]);
      for (const side of order) {
        const { chain, da } = side === 'large' ? large : small;
        const home = linkCopy(scope, chain.home, 'noded-bench-scale-full-');
        synced[side].push(await syncRate(home, BigInt(chain.blocks + syncBlocks), syncDaFlags(da)));
      }
    }
    const largeName = `${largeBlocks.toLocaleString('en-US')} blocks${opts.quick ? ' (--quick: not a million)' : ''}`;
    const versus = `noded: a node holding ${largeName}; baseline: the same on ${SMALL_BLOCKS.toLocaleString('en-US')} blocks`;
    const built = `The chains are empty blocks, built by bench/lib/long-chain.ts through the store's commitBlock (${Math.round(large.chain.blocksPerSecond).toLocaleString('en-US')} blocks/s for the large one), every block recorded as on DA`;
    const started = `\`noded start\` of a copy of the chain's home as a full node (DA a closed port, free ports); a round's last start of each chain runs on beside the other's, each started while the other was idle`;
    const perStart = (figure: string, unit: string, pick: (f: StartFigures) => number, how: string, target: Target = { ratioAtMost: 1.2 }): Row =>
      row(
        `Scale: ${figure}`,
        unit,
        { noded: sample(figures.large.map(pick)), baseline: sample(figures.small.map(pick)) },
        target,
        `${how}; ${versus}. ${built}. ${rounds} rounds, the chains' order alternating (which node starts, asks or is asked first).`,
      );
    const cpu = (side: StartFigures[]) => side.map((f) => f.startCpuMs.map((ms) => (ms / 1000).toFixed(2)).join('/')).join(', ');
    const mb = (side: StartFigures[]) => side.map((f) => f.rssFileMb.toFixed(0)).join(', ');
    const settled = (side: StartFigures[]) => side.map((f) => (f.settleMs / 1000).toFixed(1)).join(', ');
    const getBlock = (heights: string) =>
      `${GETBLOCK_READS.toLocaleString('en-US')} calls of GetBlock a round of each node, going through ${GETBLOCK_HEIGHTS} distinct heights ${heights} in turn, each answer read from the store: ` +
      `POST ${PATH} in Connect's unary protocol, protobuf (the JSON answers are cached by height), over one keep-alive connection (undici Client), one call at a time, ` +
      `timed to the answer's last byte, the two nodes taking turns call by call; ` +
      `after ${WARMUP_READS} unmeasured calls of ${WARMUP_HEIGHTS} heights from the chain's middle (a new process's first answers load and compile its code), to ${started}, ` +
      `once both had settled (under ${SETTLED_CPU_PERCENT}% of a core over ${SETTLE_WINDOW_MS} ms: LevelDB compacts a store it has just opened; settled after s, large: ${settled(figures.large)}; small: ${settled(figures.small)}) and ${idleMs / 1000} s more`;
    const storeBytes = diskBytes(readHome(large.chain.home).paths.storeDir);
    return [
      perStart(
        'start-up to ready',
        'ms',
        (f) => f.startMs,
        `From spawning ${started} to /health/ready answering 200, the median of ${STARTS} starts a round, the chains taking turns; ` +
          `CPU time (user and system) of each start to ready in s, large: ${cpu(figures.large)}; small: ${cpu(figures.small)}`,
      ),
      perStart(
        'idle RSS after start',
        'MB',
        (f) => f.rssMb,
        `VmRSS ${idleMs / 1000} s after ${started} had settled (as for GetBlock below); of it, pages of mapped files (RssFile: the node binary, LevelDB's tables), large: ${mb(figures.large)}; small: ${mb(figures.small)}`,
      ),
      perStart('GetBlock p50 at the tip', 'ms', (f) => f.tipP50, getBlock('ending at the tip')),
      perStart('GetBlock p99 at the tip', 'ms', (f) => f.tipP99, getBlock('ending at the tip')),
      perStart('GetBlock p50 at height 1', 'ms', (f) => f.firstP50, getBlock('from height 1')),
      perStart('GetBlock p99 at height 1', 'ms', (f) => f.firstP99, getBlock('from height 1')),
      perStart(
        '`noded status` wall time',
        'ms',
        (f) => f.statusMs,
        `\`noded status --home … --node <rpc>\` against ${started}, spawn to exit, the median of ${STATUS_CALLS} calls a round, the two nodes taking turns`,
      ),
      row(
        `Scale: DA-only sync of the last ${syncBlocks.toLocaleString('en-US')} blocks`,
        'blocks/s',
        { noded: sample(synced.large), baseline: sample(synced.small) },
        { ratioAtLeast: 0.83 },
        `After each round's nodes stop, a full node in this process on a copy of the chain's home syncs the ${syncBlocks.toLocaleString('en-US')} blocks (${SYNC_TXS_PER_BLOCK} txs × ${SYNC_TX_BYTES} B each) an aggregator made on another copy and posted to a built-in DA of the chain's own (in this process, a DA block every ${SYNC_DA_BLOCK_MS} ms), ` +
          `timed from opening the node to the last block; ${versus}. ${built}. ${rounds} rounds, the chains' order alternating.`,
      ),
      row(
        'Scale: disk bytes per block',
        'B',
        { noded: sample([storeBytes / large.chain.blocks]), baseline: sample([large.chain.encodedBytesPerBlock]) },
        { ratioAtMost: 1.2 },
        `The store of ${largeName} on disk (allocated bytes of data/store as built, LevelDB's log included) divided by its blocks; baseline: the mean size of an encoded block (its protobuf bytes). ${built}.`,
      ),
    ];
  },
};
