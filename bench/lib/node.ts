import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultConfig, loadConfig, type ConfigFlags } from '../../src/config/index.js';
import { LocalDa } from '../../src/da/index.js';
import { initHome } from '../../src/home/index.js';
import { silentLogger, type Logger } from '../../src/log/index.js';
import { Node } from '../../src/node/index.js';
import type { Block } from '../../src/types/index.js';
import type { Scope } from './scope.js';

/** The package root (holds package.json and bin/), from dist/bench/lib or bench/lib alike. */
export function packageRoot(): string {
  for (let url = new URL('./', import.meta.url); url.pathname !== '/'; url = new URL('../', url)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', url), 'utf8')) as { name?: string };
      if (pkg.name === 'noded') return url.pathname;
    } catch {
      // No package.json here: go up.
    }
  }
  throw new Error('cannot find the noded package root above ' + import.meta.url);
}

const version = (): string => (JSON.parse(readFileSync(`${packageRoot()}package.json`, 'utf8')) as { version: string }).version;

export function createAggregatorHome(home: string): void {
  initHome({ home, chainId: 'bench-1', aggregator: true, force: false });
}

/**
 * Where the in-process nodes post to DA: a closed port (nothing listens on 1), so
 * every submission fails fast and the submitter backs off (up to 30 s between
 * tries). The figures measure serving and producing blocks against baselines that
 * do no DA work, so DA posting is kept out; the uncapped pending count
 * (max_pending_blocks 0) keeps production from pausing while nothing reaches DA.
 */
const NO_DA: ConfigFlags = { 'da.address': 'http://127.0.0.1:1', 'da.local': false, 'node.max_pending_blocks': 0 };

/**
 * A real aggregator in this process, on ephemeral ports. The environment is left
 * out of the config so a NODED_* variable of the shell cannot change what is measured.
 */
export function openNode(home: string, flags: ConfigFlags = {}, logger: Logger = silentLogger()): Promise<Node> {
  const config = loadConfig({
    home,
    env: {},
    flags: {
      'rpc.address': '127.0.0.1:0',
      'rpc.status_address': '127.0.0.1:0',
      'p2p.listen_address': '/ip4/127.0.0.1/tcp/0',
      'node.aggregator': true,
      ...NO_DA,
      ...flags,
    },
  });
  return Node.init({ home, config, logger, version: version() });
}

/** Starts production; a fatal production error rejects the returned promise. */
/**
 * Admits txs as `POST /tx` does, resolving once each is queued or refused (a
 * synchronous executor's submitTx returns nothing, or throws). No async
 * function a tx around submitTx: its promise was the harness's, not the node's, work.
 */
export async function admit(node: Node, txs: Uint8Array[]): Promise<void> {
  // Promise.resolve hands a promise back as it is: no allocation a tx.
  await Promise.all(txs.map((tx) => Promise.resolve(node.executor.submitTx(tx))));
}

/**
 * Admits batches without waiting, for a figure that feeds txs as blocks go by;
 * `failed` rejects with the first refusal, for the figure to race beside its producer.
 */
export function txFeeder(node: Node): { feed: (txs: Uint8Array[]) => void; failed: Promise<never> } {
  let fail: (err: unknown) => void = () => undefined;
  const failed = new Promise<never>((_, reject) => (fail = reject));
  return { feed: (txs) => void admit(node, txs).catch(fail), failed };
}

export function startProducing(node: Node): Promise<never> {
  return new Promise((_, reject) => node.start(reject));
}

/** Resolves with the next committed block that `accept` takes. */
export function nextBlock(node: Node, accept: (block: Block) => boolean): Promise<Block> {
  return new Promise((resolve) => {
    const off = node.chain.onBlock((block) => {
      if (!accept(block)) return;
      off();
      resolve(block);
    });
  });
}

/**
 * `count` distinct `key=value` txs of exactly `size` bytes; `tag` keeps keys
 * apart between calls, so every block writes new kv entries.
 */
export function makeTxs(count: number, size: number, tag: string): Buffer[] {
  const txs: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const tx = Buffer.alloc(size, 'v');
    const key = `${tag}-${i}=`;
    if (key.length >= size) throw new Error(`tx size ${size} is too small for key ${key}`);
    tx.write(key);
    txs.push(tx);
  }
  return txs;
}

/**
 * `promise`, or a rejection naming `what` after `ms`: a node that stops making
 * blocks (production paused, say) fails the figure instead of hanging the run.
 */
export function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** A full node's home for the chain of the aggregator at `aggregatorHome` (its genesis copied over). */
export function createFullNodeHome(home: string, aggregatorHome: string): void {
  initHome({ home, chainId: 'bench-1', aggregator: false, force: true });
  copyFileSync(join(aggregatorHome, 'config', 'genesis.json'), join(home, 'config', 'genesis.json'));
}

/**
 * Runs a node's producer until `blocks` blocks of `txsPerBlock` txs of
 * `txBytes` are committed, and returns the blocks/s. Each block's txs are
 * admitted once the block before is built and handed to the store (its txs
 * have left the mempool then, and a pipelined chain builds the next block
 * while that one is written), so every block is full. The txs are built
 * before the clock starts; admitting them (submitTx) is timed, as it is node work.
 */
export async function produceFullBlocks(node: Node, blocks: number, txsPerBlock: number, txBytes: number, tag: string): Promise<number> {
  const feeder = txFeeder(node);
  const batches = Array.from({ length: blocks }, (_, b) => makeTxs(txsPerBlock, txBytes, `${tag}b${b}`));
  const store = node.store;
  const commitBlock = store.commitBlock.bind(store);
  let handed = 0;
  store.commitBlock = (...args) => {
    handed++;
    if (handed < blocks) feeder.feed(batches[handed]!);
    return commitBlock(...args);
  };
  let committed = 0;
  const lastCommitAt = new Promise<number>((resolve, reject) => {
    node.chain.onBlock((block) => {
      if (committed >= blocks) return; // the producer may finish one more block while closing
      if (block.data!.txs.length !== txsPerBlock) reject(new Error(`block with ${block.data!.txs.length} txs, expected ${txsPerBlock}`));
      committed++;
      if (committed === blocks) resolve(performance.now());
    });
  });
  // Admission is asynchronous (the store's tx index is read); the producer waits for admissions under way.
  feeder.feed(batches[0]!);
  const start = performance.now();
  // Far slower than any healthy run (5 blocks/s), so it only trips when production stalls.
  const end = await withDeadline(
    Promise.race([lastCommitAt, startProducing(node), feeder.failed]),
    30_000 + blocks * 200,
    `${blocks} blocks (${committed} so far)`,
  );
  return blocks / ((end - start) / 1000);
}

/** The built-in DA server in this process, on an ephemeral port, closed with the scope; its blocks in `dir` (a temp dir unless given). */
export async function startLocalDa(scope: Scope, blockTimeMs: number, dir = scope.tempDir('noded-bench-da-')): Promise<LocalDa> {
  const da = await LocalDa.start({
    dir,
    listen: '127.0.0.1:0',
    blockTimeMs,
    maxBlobSize: defaultConfig().da.max_blob_size,
    logger: silentLogger(),
  });
  scope.defer(() => da.close());
  return da;
}

/** Polls `check` every 5 ms until it holds; rejects naming `what` after `ms`. */
export function until(check: () => boolean, ms: number, what: string): Promise<void> {
  return withDeadline(
    (async () => {
      while (!check()) await new Promise((resolve) => setTimeout(resolve, 5));
    })(),
    ms,
    what,
  );
}
