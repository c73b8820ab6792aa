import { connect } from 'node:net';
import type { Bench, BenchOptions } from '../lib/figure.js';
import { spawnNoded } from '../lib/chain.js';
import { EXEC_BLOCK_TIME, execRoundNote, remoteExecutionRounds } from '../lib/exec-rate.js';
import { freePort } from '../lib/ports.js';
import { row } from '../lib/report.js';
import { stopChild, type Scope } from '../lib/scope.js';

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
  description: `txs/s through the ABCI path (CheckTx, FinalizeBlock, Commit; the reference kvstore app over a socket) vs the built-in kv, block_time ${EXEC_BLOCK_TIME}`,
  async run(opts: BenchOptions, scope: Scope) {
    const paired = await remoteExecutionRounds(opts, scope, 'abci', async (scope) => {
      const app = await startKvStoreProcess(scope);
      return { config: { 'execution.type': 'abci', 'execution.abci_address': app.address }, stop: app.stop };
    });
    const note =
      `${execRoundNote(opts)} noded: execution.type abci ` +
      `with the reference kvstore app in its own process (\`noded abci kvstore\`, a fresh one a round, tcp on 127.0.0.1), as a standalone Cosmos-SDK app runs ` +
      `beside a node; CheckTx pipelined behind one Flush, one FinalizeBlock and one Commit a block. ` +
      `Baseline: the built-in kv machine in the node's process, same txs and cadence.`;
    return [row('ABCI txs/s (kvstore app)', 'txs/s', paired, { ratioAtLeast: 0.5 }, note)];
  },
};
