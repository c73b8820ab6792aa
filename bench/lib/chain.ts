import type { ConfigFlags } from '../../src/config/index.js';
import type { LocalDa } from '../../src/da/index.js';
import { createAggregatorHome, createFullNodeHome, openNode, produceFullBlocks, startLocalDa, startProducing, until, withDeadline } from './node.js';
import type { Scope } from './scope.js';

/** The chain the sync figures (da-sync, catchup) replay: full blocks of 10 txs × 100 B. */
export const SYNC_TXS_PER_BLOCK = 10;
export const SYNC_TX_BYTES = 100;
/** The built-in DA's block time for the sync figures. */
export const SYNC_DA_BLOCK_MS = 100;

/** Config flags that point a node at `da` with the sync figures' DA block time. */
export const syncDaFlags = (da: LocalDa): ConfigFlags => ({ 'da.address': da.address, 'da.block_time': `${SYNC_DA_BLOCK_MS}ms` });

/**
 * An aggregator in this process produces `blocks` full blocks (block_time 1ms)
 * and posts them to the built-in DA; returns its production rate and its home
 * (for the genesis, and to reopen as a peer holding the chain). Nothing is
 * closed before every block is on DA.
 */
async function buildSyncChain(scope: Scope, da: LocalDa, blocks: number): Promise<{ home: string; blocksPerSecond: number }> {
  const home = scope.tempDir('noded-bench-sync-agg-');
  createAggregatorHome(home);
  const node = await openNode(home, { 'node.block_time': '1ms', ...syncDaFlags(da) });
  try {
    const blocksPerSecond = await produceFullBlocks(node, blocks, SYNC_TXS_PER_BLOCK, SYNC_TX_BYTES, 'sync');
    await until(() => node.store.daIncludedHeight() >= BigInt(blocks), 60_000, `${blocks} blocks on DA`);
    return { home, blocksPerSecond };
  } finally {
    await node.close();
  }
}

/**
 * What the sync figures share: the built-in DA in this process and a chain of
 * `blocks` full blocks on it (fewer blocks and rounds with --quick).
 */
export async function syncFixture(quick: boolean, scope: Scope): Promise<{ blocks: number; rounds: number; da: LocalDa; chain: { home: string; blocksPerSecond: number } }> {
  const { blocks, rounds } = quick ? { blocks: 2_000, rounds: 2 } : { blocks: 10_000, rounds: 3 };
  const da = await startLocalDa(scope, SYNC_DA_BLOCK_MS);
  const chain = await buildSyncChain(scope, da, blocks);
  return { blocks, rounds, da, chain };
}

/**
 * Blocks/s a fresh full node of the chain at `aggregatorHome`, opened with
 * `flags` (where it gets blocks from: DA, peers), applies from genesis until it
 * holds `blocks` blocks. The clock starts before the node opens, so a node
 * that has to dial a peer pays for the connection.
 */
export async function freshSyncRate(scope: Scope, aggregatorHome: string, blocks: number, flags: ConfigFlags): Promise<number> {
  const home = scope.tempDir('noded-bench-sync-full-');
  createFullNodeHome(home, aggregatorHome);
  const start = performance.now();
  const node = await openNode(home, { 'node.aggregator': false, ...flags });
  try {
    const synced = new Promise<number>((resolve) => {
      node.chain.onBlock((block) => {
        if (block.header!.header!.height === BigInt(blocks)) resolve(performance.now());
      });
    });
    // Far slower than any target (20 blocks/s), so it only trips when sync stalls.
    const end = await withDeadline(Promise.race([synced, startProducing(node)]), 30_000 + blocks * 50, `the full node to sync ${blocks} blocks`);
    return blocks / ((end - start) / 1000);
  } finally {
    await node.close();
  }
}
