import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LocalDa } from '../../src/da/index.js';
import { readHome } from '../../src/home/index.js';
import { SYNC_DA_BLOCK_MS, SYNC_TX_BYTES, SYNC_TXS_PER_BLOCK, buildSyncChain, startFullNodeProcess, syncDaFlags, syncRate } from '../lib/chain.js';
import type { Bench, BenchOptions } from '../lib/figure.js';
import { buildLongChain, diskBytes, linkCopy, type LongChain } from '../lib/long-chain.js';
import { packageRoot, startLocalDa } from '../lib/node.js';
import { cpuPercent, residentMb, wallTimeMs } from '../lib/process.js';
import { row, type Row, type Target } from '../lib/report.js';
import { sample } from '../lib/rounds.js';
import { stopChild, type Scope } from '../lib/scope.js';

const SMALL_BLOCKS = 1_000;
/** Distinct heights GetBlock is asked for at each end of the chain, each once (so every answer is read from the store). */
const GETBLOCK_HEIGHTS = 500;
const PATH = '/node.v1.StoreService/GetBlock';
/** A node using less of a core than this over a window is settled: no compaction of its store under way. */
const SETTLED_CPU_PERCENT = 5;
const SETTLE_WINDOW_MS = 500;
/** Longest wait for a node to settle; past it the figures are measured anyway. */
const SETTLE_LIMIT_MS = 120_000;

/** What one `noded start` on a chain's home measures. */
interface StartFigures {
  startMs: number;
  /** From ready to settled (SETTLED_CPU_PERCENT). */
  settleMs: number;
  rssMb: number;
  /** The part of rssMb that is pages of mapped files (the node binary, LevelDB's tables). */
  rssFileMb: number;
  tipP50: number;
  tipP99: number;
  firstP50: number;
  firstP99: number;
  statusMs: number;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** GetBlock latency (ms) of each height of `heights`, asked one after another. */
async function getBlockLatencies(rpc: string, heights: number[]): Promise<number[]> {
  const latencies: number[] = [];
  for (const height of heights) {
    const start = performance.now();
    const res = await fetch(rpc + PATH, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ height }) });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`GetBlock ${height} answered ${res.status}: ${body}`);
    latencies.push(performance.now() - start);
  }
  return latencies;
}

const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

/** Waits until `pid` uses less than SETTLED_CPU_PERCENT of a core over a window (at most SETTLE_LIMIT_MS); the ms it waited. */
async function settle(pid: number): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < SETTLE_LIMIT_MS && (await cpuPercent(pid, SETTLE_WINDOW_MS)) >= SETTLED_CPU_PERCENT);
  return performance.now() - start;
}

/**
 * Starts the chain's home (a copy: the node writes to its store) as a full node,
 * then measures it: start-up to ready; once it has settled (LevelDB compacts a
 * store just opened, on a background thread of the node, for seconds on a
 * large one: GetBlock measured meanwhile measures the compaction), resident
 * memory after `idleMs`, GetBlock at both ends of the chain, `noded status`.
 */
async function measureStart(scope: Scope, chain: LongChain, idleMs: number): Promise<StartFigures> {
  const home = linkCopy(scope, chain.home, 'noded-bench-scale-node-');
  const start = performance.now();
  const node = await startFullNodeProcess(scope, home, 'ready');
  const startMs = performance.now() - start;
  try {
    const settleMs = await settle(node.child.pid!);
    await new Promise((resolve) => setTimeout(resolve, idleMs));
    const rssMb = residentMb(node.child.pid!);
    const rssFileMb = residentMb(node.child.pid!, 'RssFile');
    const tip = await getBlockLatencies(node.rpc, range(chain.blocks - GETBLOCK_HEIGHTS + 1, GETBLOCK_HEIGHTS));
    const first = await getBlockLatencies(node.rpc, range(1, GETBLOCK_HEIGHTS));
    const statusMs = await wallTimeMs(scope, [`${packageRoot()}bin/run.js`, 'status', '--home', home, '--node', node.rpc]);
    return {
      startMs,
      settleMs,
      rssMb,
      rssFileMb,
      tipP50: percentile(tip, 50),
      tipP99: percentile(tip, 99),
      firstP50: percentile(first, 50),
      firstP99: percentile(first, 99),
      statusMs,
    };
  } finally {
    await stopChild(node.child);
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
      ? { largeBlocks: 100_000, syncBlocks: 2_000, rounds: 2, idleMs: 3_000 }
      : { largeBlocks: 1_000_000, syncBlocks: 10_000, rounds: 3, idleMs: 5_000 };
    process.stderr.write(`bench: scale: building a chain of ${largeBlocks.toLocaleString('en-US')} blocks…\n`);
    const large = await prepareChain(scope, largeBlocks, syncBlocks);
    const small = await prepareChain(scope, SMALL_BLOCKS, syncBlocks);
    const figures = { large: [] as StartFigures[], small: [] as StartFigures[] };
    const synced = { large: [] as number[], small: [] as number[] };
    for (let i = 0; i < rounds; i++) {
      // The other order every other round, so both chains see the same machine load.
      for (const side of i % 2 === 0 ? (['small', 'large'] as const) : (['large', 'small'] as const)) {
        const { chain, da } = side === 'large' ? large : small;
        figures[side].push(await measureStart(scope, chain, idleMs));
        const home = linkCopy(scope, chain.home, 'noded-bench-scale-full-');
        synced[side].push(await syncRate(home, BigInt(chain.blocks + syncBlocks), syncDaFlags(da)));
      }
    }
    const largeName = `${largeBlocks.toLocaleString('en-US')} blocks${opts.quick ? ' (--quick: not a million)' : ''}`;
    const versus = `noded: a node holding ${largeName}; baseline: the same on ${SMALL_BLOCKS.toLocaleString('en-US')} blocks`;
    const built = `The chains are empty blocks, built by bench/lib/long-chain.ts through the store's commitBlock (${Math.round(large.chain.blocksPerSecond).toLocaleString('en-US')} blocks/s for the large one), every block recorded as on DA`;
    const started = `\`noded start\` of a copy of the chain's home as a full node (DA a closed port, free ports)`;
    const perStart = (figure: string, unit: string, pick: (f: StartFigures) => number, how: string, target: Target = { ratioAtMost: 1.2 }): Row =>
      row(
        `Scale: ${figure}`,
        unit,
        { noded: sample(figures.large.map(pick)), baseline: sample(figures.small.map(pick)) },
        target,
        `${how}; ${versus}. ${built}. ${rounds} rounds, the chains' order alternating.`,
      );
    const mb = (side: StartFigures[]) => side.map((f) => f.rssFileMb.toFixed(0)).join(', ');
    const settled = (side: StartFigures[]) => side.map((f) => (f.settleMs / 1000).toFixed(1)).join(', ');
    const getBlock = (heights: string) =>
      `POST ${PATH} for ${GETBLOCK_HEIGHTS} distinct heights ${heights}, one after another, each read from the store once, to ${started}, ` +
      `once it has settled (under ${SETTLED_CPU_PERCENT}% of a core over ${SETTLE_WINDOW_MS} ms: LevelDB compacts a store it has just opened; settled after s, large: ${settled(figures.large)}; small: ${settled(figures.small)}) and ${idleMs / 1000} s more`;
    const storeBytes = diskBytes(readHome(large.chain.home).paths.storeDir);
    return [
      perStart('start-up to ready', 'ms', (f) => f.startMs, `From spawning ${started} to /health/ready answering 200`),
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
      perStart('`noded status` wall time', 'ms', (f) => f.statusMs, `\`noded status --home … --node <rpc>\` against ${started}, spawn to exit`),
      row(
        `Scale: DA-only sync of the last ${syncBlocks.toLocaleString('en-US')} blocks`,
        'blocks/s',
        { noded: sample(synced.large), baseline: sample(synced.small) },
        { ratioAtLeast: 0.83 },
        `A full node in this process on a copy of the chain's home syncs the ${syncBlocks.toLocaleString('en-US')} blocks (${SYNC_TXS_PER_BLOCK} txs × ${SYNC_TX_BYTES} B each) an aggregator made on another copy and posted to a built-in DA of the chain's own (in this process, a DA block every ${SYNC_DA_BLOCK_MS} ms), ` +
          `timed from opening the node to the last block; ${versus}. ${built}. ${rounds} rounds.`,
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
