import type { ExecutionMethod, NodeMetrics } from '../metrics/index.js';
import type { Executor } from './executor.js';

/**
 * The executor as the chain, producer and submitter call it, each call timed
 * by method and its failures counted: one wrapper for every execution layer.
 */
export function instrumentExecutor(executor: Executor, metrics: NodeMetrics): Executor {
  const timed = <A extends unknown[], R>(method: ExecutionMethod, call: (...args: A) => Promise<R>) => {
    const labels = { method };
    return async (...args: A): Promise<R> => {
      const end = metrics.executionDuration.startTimer(labels);
      try {
        return await call(...args);
      } catch (err) {
        metrics.executionErrors.inc(labels);
        throw err;
      } finally {
        end();
      }
    };
  };
  return {
    initChain: timed('initChain', (...args: Parameters<Executor['initChain']>) => executor.initChain(...args)),
    getTxs: timed('getTxs', (time?: bigint, maxBytes?: number) => executor.getTxs(time, maxBytes)),
    filterTxs: (...args) => executor.filterTxs(...args),
    executeTxs: timed('executeTxs', (...args: Parameters<Executor['executeTxs']>) => executor.executeTxs(...args)),
    setFinal: timed('setFinal', (height: bigint) => executor.setFinal(height)),
    submitTx: (tx) => executor.submitTx(tx),
    pipelined: executor.pipelined === true,
  };
}
