import type { Node } from '../../src/node/index.js';
import type { ConfigFlags } from '../../src/config/index.js';
import type { BenchOptions } from './figure.js';
import { createAggregatorHome, makeTxs, openNode, startProducing, withDeadline } from './node.js';
import { interleave, type Paired } from './rounds.js';
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

/** An execution layer in a process of its own, started fresh for a round: the node config that reaches it, and how to stop it. */
export interface RemoteExecution {
  config: ConfigFlags;
  stop: () => Promise<void>;
}

const TX_BYTES = 100;
/** The cadence both execution figures run at. */
export const EXEC_BLOCK_TIME = '100ms';

/**
 * Rounds of the node's tx path through a remote execution layer (a fresh one
 * a round, from `start`), interleaved with the same load on the built-in kv
 * machine in the node's process: the abci and grpc-exec figures.
 */
export async function remoteExecutionRounds(opts: BenchOptions, scope: Scope, tag: string, start: (scope: Scope) => Promise<RemoteExecution>): Promise<Paired> {
  const { rounds, count } = opts.quick ? { rounds: 3, count: 20_000 } : { rounds: 5, count: 100_000 };
  let r = 0;
  return interleave(
    rounds,
    {
      baseline: () => execRound(scope, makeTxs(count, TX_BYTES, `kv${r}`), EXEC_BLOCK_TIME),
      noded: async () => {
        const remote = await start(scope);
        try {
          return await execRound(scope, makeTxs(count, TX_BYTES, `${tag}${r++}`), EXEC_BLOCK_TIME, remote.config);
        } finally {
          await remote.stop();
        }
      },
    },
    { nodedOnly: opts.nodedOnly },
  );
}

/** The opening of both figures' notes: what a round does. */
export function execRoundNote(opts: BenchOptions): string {
  const count = opts.quick ? 20_000 : 100_000;
  return (
    `A real in-process aggregator (node.block_time ${EXEC_BLOCK_TIME}, DA kept out) takes ${count.toLocaleString('en')} txs × ${TX_BYTES} B through executor.submitTx ` +
    `(${IN_FLIGHT} at a time) while producing; figure = txs / time from the first submission to the commit of the last.`
  );
}
