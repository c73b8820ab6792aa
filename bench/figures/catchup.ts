import type { Bench, BenchOptions } from '../lib/figure.js';
import { SYNC_DA_BLOCK_MS, SYNC_TX_BYTES, SYNC_TXS_PER_BLOCK, freshSyncRate, startPeerProcess, syncDaFlags, syncFixture } from '../lib/chain.js';
import { row } from '../lib/report.js';
import { interleave } from '../lib/rounds.js';
import type { Scope } from '../lib/scope.js';

export const catchup: Bench = {
  name: 'catchup',
  description: 'P2P catch-up blocks/s of a fresh full node from a peer holding the chain vs DA-only sync of the same blocks',
  async run(opts: BenchOptions, scope: Scope) {
    // The DA in its own process, as the peer is: each side measures only the catching-up node's work here.
    const { blocks, rounds, da, chain } = await syncFixture(opts.quick, scope, { daProcess: true });
    // The aggregator's home started again as a full node (not producing) in its own `noded start`
    // process, as a peer on another machine would be: it holds the chain and serves it.
    const peerAddress = await startPeerProcess(scope, chain.home);
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
          `from a peer (the aggregator's home run as a full node by \`noded start\` in its own process, loopback TCP) holding ${blocks} blocks of ${SYNC_TXS_PER_BLOCK} txs × ${SYNC_TX_BYTES} B: ` +
          `every block checked, executed and stored, timed from opening the node (dial included) to block ${blocks}; ${rounds} rounds, a fresh node each. ` +
          `Baseline: a fresh full node with no peers syncing the same blocks from the built-in DA alone (\`noded da serve\` in its own process, a DA block every ${SYNC_DA_BLOCK_MS} ms), timed the same way, rounds alternating.`,
      ),
    ];
  },
};
