import { connect } from 'node:net';
import type { Bench, BenchOptions } from '../lib/figure.js';
import { spawnNoded } from '../lib/chain.js';
import { IN_FLIGHT, execRound } from '../lib/exec-rate.js';
import { makeTxs } from '../lib/node.js';
import { freePort } from '../lib/ports.js';
import { row } from '../lib/report.js';
import { interleave } from '../lib/rounds.js';
import { stopChild, type Scope } from '../lib/scope.js';

const TX_BYTES = 100;
const BLOCK_TIME = '100ms';

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

export const abci: Bench = {
  name: 'abci',
  description: `txs/s through the ABCI path (CheckTx, FinalizeBlock, Commit; the reference kvstore app over a socket) vs the built-in kv, block_time ${BLOCK_TIME}`,
  async run(opts: BenchOptions, scope: Scope) {
    const { rounds, count } = opts.quick ? { rounds: 3, count: 20_000 } : { rounds: 5, count: 100_000 };
    let r = 0;
    const paired = await interleave(
      rounds,
      {
        baseline: () => execRound(scope, makeTxs(count, TX_BYTES, `kv${r}`), BLOCK_TIME),
        noded: async () => {
          // A fresh app a round, in its own process as a Cosmos-SDK app is deployed: the node's thread does only the node's side.
          const app = await startKvStoreProcess(scope);
          try {
            return await execRound(scope, makeTxs(count, TX_BYTES, `abci${r++}`), BLOCK_TIME, {
              'execution.type': 'abci',
              'execution.abci_address': app.address,
            });
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
