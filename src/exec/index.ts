export { CheckTxRejectedError, TxBackpressureError, TxRejectedError, type BlockResults, type Executor, type ExecResult } from './executor.js';
export { FilterStatus, filterBySize } from './filter.js';
export { Mempool, TxAlreadyKnownError, type MempoolLimits, type MempoolStore } from './mempool.js';
export { KvExecutor, MAX_BLOCK_TXS, MAX_BLOCK_TX_BYTES } from './kv/kv.js';
export { createExecutor, type ExecutorDeps } from './create.js';
// The ABCI, EVM and gRPC executors are loaded by createExecutor when the config names them: a kv node never loads them.
export type { AbciExecutor } from './abci/index.js';
export { instrumentExecutor } from './instrumented.js';
