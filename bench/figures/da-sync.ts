import type { Bench, BenchOptions } from '../lib/figure.js';
import { SYNC_DA_BLOCK_MS, SYNC_TX_BYTES, SYNC_TXS_PER_BLOCK, freshSyncRate, syncDaFlags, syncFixture } from '../lib/chain.js';
import { row } from '../lib/report.js';
import { sample } from '../lib/rounds.js';
import type { Scope } from '../lib/scope.js';

export const daSync: Bench = {
  name: 'da-sync',
  description: 'DA-only sync blocks/s of a fresh full node from the built-in DA vs the aggregator producing those blocks',
  async run(opts: BenchOptions, scope: Scope) {
    const { blocks, rounds, da, chain } = await syncFixture(opts.quick, scope);
    const synced: number[] = [];
    for (let i = 0; i < rounds; i++) synced.push(await freshSyncRate(scope, chain.home, blocks, syncDaFlags(da)));
    return [
      row(
        'DA-only sync',
        'blocks/s',
        { noded: sample(synced), baseline: sample([chain.blocksPerSecond]) },
        { nodedAtLeast: 200 },
        `A fresh full node (no peers) in this process follows the chain from the built-in DA (in this process, a DA block every ${SYNC_DA_BLOCK_MS} ms) from genesis until it holds block ${blocks}: ` +
          `every block checked (signature, links, data hash, app hash), executed and stored; ${rounds} rounds, a fresh node each. ` +
          `Baseline: the aggregator producing those ${blocks} blocks of ${SYNC_TXS_PER_BLOCK} txs × ${SYNC_TX_BYTES} B (block_time 1ms, posting to the same DA as it goes), measured once when the chain is built.`,
      ),
    ];
  },
};
