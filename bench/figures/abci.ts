import { connect } from 'node:net';
import type { Node } from '../../src/node/index.js';
import type { Bench, BenchOptions } from '../lib/figure.js';
import { spawnNoded } from '../lib/chain.js';
import { createAggregatorHome, makeTxs, openNode, startProducing, withDeadline } from '../lib/node.js';
import { freePort } from '../lib/ports.js';
import { row } from '../lib/report.js';
import { interleave } from '../lib/rounds.js';
import { stopChild, type Scope } from '../lib/scope.js';

const TX_BYTES = 100;
/** Txs submitted at once; the rest wait for a slot (CheckTx calls in flight on the ABCI path). */
const IN_FLIGHT = 1_000;
const BLOCK_TIME = '100ms';

/**
 * Submits `txs` through the node's tx path (POST /tx's: CheckTx first on the
 * ABCI path) while it produces a block every 100 ms, and returns the txs/s from
 * the first submission to the commit of the block holding the last one.
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
  const end = await withDeadline(Promise.race([Promise.all([allCommitted, submitted]).then(([at]) => at), production]), 120_000, `${txs.length} txs committed (${committed} so far)`);
  return txs.length / ((end - start) / 1000);
}

/** Whether something accepts a TCP connection on 127.0.0.1:`port` now. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * The reference app as a deployment runs it: its own process (`noded abci
 * kvstore`, a fresh home), on a free port, polled until it accepts connections.
 * Returns its address and a stop that ends the child (the scope kills it too).
 */
async function startKvStoreProcess(scope: Scope): Promise<{ address: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const address = `tcp://127.0.0.1:${port}`;
  const args = ['abci', 'kvstore', '--home', scope.tempDir('noded-bench-kvstore-'), '--address', address, '--log-format', 'json'];
  const child = await spawnNoded(scope, args, () => accepts(port), '`noded abci kvstore`');
  return { address, stop: () => stopChild(child) };
}

/** A fresh aggregator in this process: the kv machine, or the ABCI app at `abciAddress`. */
async function round(scope: Scope, txs: Buffer[], abciAddress?: string): Promise<number> {
  const home = scope.tempDir('noded-bench-abci-');
  createAggregatorHome(home);
  const execution = abciAddress ? { 'execution.type': 'abci', 'execution.abci_address': abciAddress } : {};
  const node = await openNode(home, { 'node.block_time': BLOCK_TIME, 'node.mempool_max_txs': txs.length, ...execution });
  try {
    return await txsPerSecond(node, txs);
  } finally {
    await node.close();
  }
}

export const abci: Bench = {
  name: 'abci',
  description: `txs/s through the ABCI path (CheckTx, FinalizeBlock, Commit; the reference kvstore app over a socket) vs the built-in kv, block_time ${BLOCK_TIME}`,
  async run(opts: BenchOptions, scope: Scope) {
    const { rounds, count } = opts.quick ? { rounds: 3, count: 20_000 } : { rounds: 5, count: 100_000 };
    let r = 0;
    const paired = await interleave(
      rounds,
      {
        baseline: () => round(scope, makeTxs(count, TX_BYTES, `kv${r}`)),
        noded: async () => {
          // A fresh app a round, in its own process as a Cosmos-SDK app is deployed: the node's thread does only the node's side.
          const app = await startKvStoreProcess(scope);
          try {
            return await round(scope, makeTxs(count, TX_BYTES, `abci${r++}`), app.address);
          } finally {
            await app.stop();
          }
        },
      },
      { nodedOnly: opts.nodedOnly },
    );
    const note =
      `A real in-process aggregator (node.block_time ${BLOCK_TIME}, DA kept out) takes ${count.toLocaleString('en')} txs × ${TX_BYTES} B through executor.submitTx ` +
      `(${IN_FLIGHT} at a time) while producing; figure = txs / time from the first submission to the commit of the last. noded: execution.type abci ` +
      `with the reference kvstore app in its own process (\`noded abci kvstore\`, a fresh one a round, tcp on 127.0.0.1), as a standalone Cosmos-SDK app runs ` +
      `beside a node; CheckTx pipelined behind one Flush, one FinalizeBlock and one Commit a block. ` +
      `Baseline: the built-in kv machine in the node's process, same txs and cadence.`;
    return [row('ABCI txs/s (kvstore app)', 'txs/s', paired, { ratioAtLeast: 0.5 }, note)];
  },
};
