import type { LocalDa } from '../../src/da/index.js';
import type { Bench, BenchOptions } from '../lib/figure.js';
import { createAggregatorHome, createFullNodeHome, openNode, produceFullBlocks, startLocalDa, startProducing, until, withDeadline } from '../lib/node.js';
import { row } from '../lib/report.js';
import { sample } from '../lib/rounds.js';
import type { Scope } from '../lib/scope.js';

const TXS_PER_BLOCK = 10;
const TX_BYTES = 100;
const DA_BLOCK_MS = 100;

/**
 * An aggregator in this process produces `blocks` full blocks (block_time 1ms)
 * and posts them to the built-in DA; returns its production rate and its home
 * (for the genesis). Nothing is closed before every block is on DA.
 */
async function buildChain(scope: Scope, da: LocalDa, blocks: number): Promise<{ home: string; blocksPerSecond: number }> {
  const home = scope.tempDir('noded-bench-da-sync-agg-');
  createAggregatorHome(home);
  const node = await openNode(home, { 'node.block_time': '1ms', 'da.address': da.address, 'da.block_time': `${DA_BLOCK_MS}ms` });
  try {
    const blocksPerSecond = await produceFullBlocks(node, blocks, TXS_PER_BLOCK, TX_BYTES, 'sync');
    await until(() => node.store.daIncludedHeight() >= BigInt(blocks), 60_000, `${blocks} blocks on DA`);
    return { home, blocksPerSecond };
  } finally {
    await node.close();
  }
}

/** Blocks/s a fresh full node applies from DA alone, from start until it holds `blocks` blocks. */
async function syncRate(scope: Scope, da: LocalDa, aggregatorHome: string, blocks: number): Promise<number> {
  const home = scope.tempDir('noded-bench-da-sync-full-');
  createFullNodeHome(home, aggregatorHome);
  const node = await openNode(home, { 'node.aggregator': false, 'da.address': da.address, 'da.block_time': `${DA_BLOCK_MS}ms` });
  try {
    const synced = new Promise<number>((resolve) => {
      node.chain.onBlock((block) => {
        if (block.header!.header!.height === BigInt(blocks)) resolve(performance.now());
      });
    });
    const start = performance.now();
    // Far slower than the target (20 blocks/s), so it only trips when sync stalls.
    const end = await withDeadline(Promise.race([synced, startProducing(node)]), 30_000 + blocks * 50, `the full node to sync ${blocks} blocks`);
    return blocks / ((end - start) / 1000);
  } finally {
    await node.close();
  }
}

export const daSync: Bench = {
  name: 'da-sync',
  description: 'DA-only sync blocks/s of a fresh full node from the built-in DA vs the aggregator producing those blocks',
  async run(opts: BenchOptions, scope: Scope) {
    const { blocks, rounds } = opts.quick ? { blocks: 2_000, rounds: 2 } : { blocks: 10_000, rounds: 3 };
    const da = await startLocalDa(scope, DA_BLOCK_MS);
    const chain = await buildChain(scope, da, blocks);
    const synced: number[] = [];
    for (let i = 0; i < rounds; i++) synced.push(await syncRate(scope, da, chain.home, blocks));
    return [
      row(
        'DA-only sync',
        'blocks/s',
        { noded: sample(synced), baseline: sample([chain.blocksPerSecond]) },
        { nodedAtLeast: 200 },
        `A fresh full node (no peers) in this process follows the chain from the built-in DA (in this process, a DA block every ${DA_BLOCK_MS} ms) from genesis until it holds block ${blocks}: ` +
          `every block checked (signature, links, data hash, app hash), executed and stored; ${rounds} rounds, a fresh node each. ` +
          `Baseline: the aggregator producing those ${blocks} blocks of ${TXS_PER_BLOCK} txs × ${TX_BYTES} B (block_time 1ms, posting to the same DA as it goes), measured once when the chain is built.`,
      ),
    ];
  },
};
