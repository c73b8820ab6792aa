import type { Bench, BenchOptions } from '../lib/figure.js';
import { SYNC_DA_BLOCK_MS, SYNC_TX_BYTES, SYNC_TXS_PER_BLOCK, freshSyncRate, syncDaFlags, syncFixture } from '../lib/chain.js';
import { openNode } from '../lib/node.js';
import { row } from '../lib/report.js';
import { interleave } from '../lib/rounds.js';
import type { Scope } from '../lib/scope.js';

export const catchup: Bench = {
  name: 'catchup',
  description: 'P2P catch-up blocks/s of a fresh full node from a peer holding the chain vs DA-only sync of the same blocks',
  async run(opts: BenchOptions, scope: Scope) {
    const { blocks, rounds, da, chain } = await syncFixture(opts.quick, scope);
    // The aggregator's home reopened, not producing: a peer that holds the chain and serves it.
    // openNode points its DA at a closed port, as it does the catching-up node's.
    const peer = await openNode(chain.home);
    scope.defer(() => peer.close());
    const peerAddress = peer.c.p2p.netInfo().listen_addresses[0]!;
    const paired = await interleave(
      rounds,
      {
        baseline: () => freshSyncRate(scope, chain.home, blocks, syncDaFlags(da)),
        // No DA for this node (openNode's closed port): every block comes over P2P.
        noded: () => freshSyncRate(scope, chain.home, blocks, { 'p2p.peers': peerAddress }),
      },
      { nodedOnly: opts.nodedOnly },
    );
    return [
      row(
        'P2P catch-up',
        'blocks/s',
        paired,
        { ratioAtLeast: 1 },
        `A fresh full node in this process, its DA a closed port and the peer in p2p.peers, catches up from genesis to block ${blocks} over /node/<chain_id>/blocks/1.0.0 ` +
          `from a peer (the aggregator's home reopened, not producing, in this process, loopback TCP) holding ${blocks} blocks of ${SYNC_TXS_PER_BLOCK} txs × ${SYNC_TX_BYTES} B: ` +
          `every block checked, executed and stored, timed from opening the node (dial included) to block ${blocks}; ${rounds} rounds, a fresh node each. ` +
          `Baseline: a fresh full node with no peers syncing the same blocks from the built-in DA alone (a DA block every ${SYNC_DA_BLOCK_MS} ms), timed the same way, rounds alternating.`,
      ),
    ];
  },
};
