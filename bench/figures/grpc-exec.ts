import type { Bench, BenchOptions } from '../lib/figure.js';
import { answers, spawnNoded } from '../lib/chain.js';
import { EXEC_BLOCK_TIME, execRoundNote, remoteExecutionRounds } from '../lib/exec-rate.js';
import { freePort } from '../lib/ports.js';
import { row } from '../lib/report.js';
import { stopChild, type Scope } from '../lib/scope.js';

/**
 * The kv machine as an executor of its own (`noded exec serve`, a fresh home),
 * on a free port, polled until GET /health answers. Returns its URL and a stop
 * that ends the child (the scope kills it too).
 */
async function startExecutorProcess(scope: Scope): Promise<{ url: string; stop: () => Promise<void> }> {
  const url = `http://127.0.0.1:${await freePort()}`;
  const args = ['exec', 'serve', '--home', scope.tempDir('noded-bench-exec-serve-'), '--listen', url.slice('http://'.length), '--log-format', 'json'];
  const child = await spawnNoded(scope, args, answers(`${url}/health`), '`noded exec serve`');
  return { url, stop: () => stopChild(child) };
}

export const grpcExec: Bench = {
  name: 'grpc-exec',
  description: `txs/s through execution.type grpc (the kv machine behind ExecutorService in its own process) vs the built-in kv, block_time ${EXEC_BLOCK_TIME}`,
  async run(opts: BenchOptions, scope: Scope) {
    const paired = await remoteExecutionRounds(opts, scope, 'grpc', async (scope) => {
      const executor = await startExecutorProcess(scope);
      return { config: { 'execution.type': 'grpc', 'execution.grpc_address': executor.url }, stop: executor.stop };
    });
    const note =
      `${execRoundNote(opts)} noded: execution.type grpc ` +
      `with the kv machine in its own process (\`noded exec serve\`, a fresh one a round, h2c gRPC on 127.0.0.1): GetTxs, GetExecutionInfo, FilterTxs and ExecuteTxs a block, ` +
      `the executor writing its state and ledger to its own LevelDB. Baseline: the built-in kv machine in the node's process, same txs and cadence.`;
    return [row('gRPC executor txs/s (kv machine)', 'txs/s', paired, { ratioAtLeast: 0.8 }, note)];
  },
};
