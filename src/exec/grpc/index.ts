export { GrpcExecutor, ExecutorError, ExecutorUnreachableError, type GrpcExecutorOptions } from './executor.js';
export { ExecutorServer, type ExecutorServerOptions } from './server.js';
export { LedgerMachine, type ServedMachine } from './machine.js';
export { decodeTxBatch, encodeTxBatch } from './tx-batch.js';
export { DEFAULT_EXEC_PORT, initGrpcHome } from './init.js';
