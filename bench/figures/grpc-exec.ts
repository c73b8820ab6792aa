import type { Bench, BenchOptions } from '../lib/figure.js';
import { answers, spawnNoded } from '../lib/chain.js';
import { IN_FLIGHT, execRound } from '../lib/exec-rate.js';
import { makeTxs } from '../lib/node.js';
import { freePort } from '../lib/ports.js';
import { row } from '../lib/report.js';
import { interleave } from '../lib/rounds.js';
import { stopChild, type Scope } from '../lib/scope.js';

const TX_BYTES = 100;
const BLOCK_TIME = '100ms';

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
  description: `txs/s through execution.type grpc (the kv machine behind ExecutorService in its own process) vs the built-in kv, block_time ${BLOCK_TIME}`,
  async run(opts: BenchOptions, scope: Scope) {
    const { rounds, count } = opts.quick ? { rounds: 3, count: 20_000 } : { rounds: 5, count: 100_000 };
    let r = 0;
    const paired = await interleave(
      rounds,
      {
        baseline: () => execRound(scope, makeTxs(count, TX_BYTES, `kv${r}`), BLOCK_TIME),
        noded: async () => {
          const executor = await startExecutorProcess(scope);
          try {
            return await execRound(scope, makeTxs(count, TX_BYTES, `grpc${r++}`), BLOCK_TIME, {
              'execution.type': 'grpc',
              'execution.grpc_address': executor.url,
            });
          } finally {
            await executor.stop();
          }
        },
      },
      { nodedOnly: opts.nodedOnly },
    );
    const note =
      `A real in-process aggregator (node.block_time ${BLOCK_TIME}, DA kept out) takes ${count.toLocaleString('en')} txs × ${TX_BYTES} B through executor.submitTx ` +
      `(${IN_FLIGHT} at a time) while producing; figure = txs / time from the first submission to the commit of the last. noded: execution.type grpc ` +
      `with the kv machine in its own process (\`noded exec serve\`, a fresh one a round, h2c gRPC on 127.0.0.1): GetTxs, GetExecutionInfo, FilterTxs and ExecuteTxs a block, ` +
      `the executor writing its state and ledger to its own LevelDB. Baseline: the built-in kv machine in the node's process, same txs and cadence.`;
    return [row('gRPC executor txs/s (kv machine)', 'txs/s', paired, { ratioAtLeast: 0.8 }, note)];
  },
};
