import { resolveHomePath, type Config } from '../config/index.js';
import type { Genesis } from '../home/index.js';
import type { Logger } from '../log/index.js';
import type { BlockStore } from '../store/index.js';
import type { Executor } from './executor.js';
import { KvExecutor } from './kv/kv.js';
import type { Mempool } from './mempool.js';

/** Longest an Engine API call may take: EthereumJS takes seconds to build a block of a thousand transfers. */
const ENGINE_TIMEOUT_MS = 60_000;

export interface ExecutorDeps {
  config: Config;
  home: string;
  store: BlockStore;
  mempool: Mempool;
  /** Genesis initial_height. */
  initialHeight: bigint;
  /** The whole genesis, for an ABCI app's InitChain. */
  genesis: Genesis;
  /** Largest total of tx bytes one block takes (a block must fit one DA blob). */
  maxBlockTxBytes: number;
  logger: Logger;
}

/**
 * The execution layer execution.type names, ready for Chain.load (kv is the
 * default). The others are imported here, when named: their clients (cosmjs
 * types, jose, the gRPC transport) cost a kv node some 20 MB of memory it never uses.
 */
export async function createExecutor(deps: ExecutorDeps): Promise<Executor> {
  const { config, store } = deps;
  const execution = config.execution;
  switch (execution.type) {
    case 'kv': {
      const kv = new KvExecutor(store, deps.mempool, deps.maxBlockTxBytes);
      await kv.load();
      return kv;
    }
    case 'evm': {
      const { EngineClient, EvmExecutor } = await import('./evm/index.js');
      return new EvmExecutor({
        engine: new EngineClient({ url: execution.engine_url, jwtFile: resolveHomePath(deps.home, execution.jwt_secret_file), timeoutMs: ENGINE_TIMEOUT_MS }),
        store,
        feeRecipient: execution.fee_recipient,
        initialHeight: deps.initialHeight,
        logger: deps.logger,
      });
    }
    case 'abci': {
      const { AbciClient, AbciExecutor } = await import('./abci/index.js');
      return new AbciExecutor({
        client: new AbciClient({ address: execution.abci_address, logger: deps.logger }),
        store,
        mempool: deps.mempool,
        genesis: deps.genesis,
        maxBlockTxBytes: deps.maxBlockTxBytes,
        logger: deps.logger,
      });
    }
    case 'grpc': {
      const { GrpcExecutor } = await import('./grpc/index.js');
      return new GrpcExecutor({
        url: execution.grpc_address,
        token: execution.grpc_auth_token,
        store,
        mempool: deps.mempool,
        genesis: deps.genesis,
        maxBlockTxBytes: deps.maxBlockTxBytes,
        logger: deps.logger,
      });
    }
  }
}
