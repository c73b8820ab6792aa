export { TxRejectedError, type Executor, type ExecResult } from './executor.js';
export { Mempool, type MempoolLimits } from './mempool.js';
export { KvExecutor, parseKvTx, MAX_BLOCK_TXS, MAX_BLOCK_TX_BYTES } from './kv/kv.js';
