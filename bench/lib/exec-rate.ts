import type { Node } from '../../src/node/index.js';
import type { ConfigFlags } from '../../src/config/index.js';
import { createAggregatorHome, openNode, startProducing, withDeadline } from './node.js';
import type { Scope } from './scope.js';

/** Txs submitted at once; the rest wait for a slot (CheckTx calls in flight on the ABCI path). */
export const IN_FLIGHT = 1_000;

/**
 * Submits `txs` through the node's tx path (POST /tx's: CheckTx first on the
 * ABCI path) while it produces, and returns the txs/s from the first
 * submission to the commit of the block holding the last one.
 */
async function txsPerSecond(node: Node, txs: Buffer[]): Promise<number> {
  let committed = 0;
  const allCommitted = new Promise<number>((resolve) => {
    node.chain.onBlock((block) => {
      committed += block.data!.txs.length;
      if (committed >= txs.length) resolve(performance.now());
    });
  });
  const start = performance.now();
  const production = startProducing(node);
  let next = 0;
  const submitter = async () => {
    while (next < txs.length) await node.executor.submitTx(txs[next++]!);
  };
  const submitted = Promise.all(Array.from({ length: IN_FLIGHT }, submitter));
  const end = await withDeadline(
    Promise.race([Promise.all([allCommitted, submitted]).then(([at]) => at), production]),
    120_000,
    `${txs.length} txs committed (${committed} so far)`,
  );
  return txs.length / ((end - start) / 1000);
}

/** A fresh aggregator in this process with block_time `blockTime` and the execution layer `execution` names (none: the kv machine); its txs/s for `txs`. */
export async function execRound(scope: Scope, txs: Buffer[], blockTime: string, execution: ConfigFlags = {}): Promise<number> {
  const home = scope.tempDir('noded-bench-exec-');
  createAggregatorHome(home);
  const node = await openNode(home, { 'node.block_time': blockTime, 'node.mempool_max_txs': txs.length, ...execution });
  try {
    return await txsPerSecond(node, txs);
  } finally {
    await node.close();
  }
}
