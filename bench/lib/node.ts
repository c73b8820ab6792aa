import { readFileSync } from 'node:fs';
import { loadConfig, type ConfigFlags } from '../../src/config/index.js';
import { initHome } from '../../src/home/index.js';
import { silentLogger } from '../../src/log/index.js';
import { Node } from '../../src/node/index.js';
import type { Block } from '../../src/types/index.js';

/** The package root (holds package.json and bin/), from dist/bench/lib or bench/lib alike. */
export function packageRoot(): string {
  for (let url = new URL('./', import.meta.url); url.pathname !== '/'; url = new URL('../', url)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', url), 'utf8'));
      if (pkg.name === 'noded') return url.pathname;
    } catch {
      // No package.json here: go up.
    }
  }
  throw new Error('cannot find the noded package root above ' + import.meta.url);
}

const version = (): string => JSON.parse(readFileSync(`${packageRoot()}package.json`, 'utf8')).version;

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
export function openNode(home: string, flags: ConfigFlags = {}): Promise<Node> {
  const config = loadConfig({
    home,
    env: {},
    flags: { 'rpc.address': '127.0.0.1:0', 'rpc.status_address': '127.0.0.1:0', 'p2p.listen_address': '/ip4/127.0.0.1/tcp/0', 'node.aggregator': true, ...NO_DA, ...flags },
  });
  return Node.init({ home, config, logger: silentLogger(), version: version() });
}

/** Starts production; a fatal production error rejects the returned promise. */
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
