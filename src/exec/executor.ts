import type { StoreOp } from '../store/index.js';

export interface ExecResult {
  /** State root after the block's txs. */
  stateRoot: Uint8Array;
  /** Writes an in-process executor adds to the block's atomic batch. */
  storeOps?: StoreOp[];
}

/**
 * The execution layer as the node drives it (DESIGN.md §10, after the reference
 * node's interface). Heights are block heights; times are Unix nanoseconds.
 */
export interface Executor {
  /** Sets up genesis state; returns the genesis state root. */
  initChain(genesisTime: bigint, initialHeight: bigint, chainId: string): Promise<Uint8Array>;
  /** Takes the txs for the next block, whose time (Unix ns) is `time` when the caller knows it. */
  getTxs(time?: bigint): Promise<Uint8Array[]>;
  executeTxs(txs: Uint8Array[], height: bigint, time: bigint, prevStateRoot: Uint8Array): Promise<ExecResult>;
  setFinal(height: bigint): Promise<void>;
  /** Queues a tx sent to the node (an out-of-process layer may check it first); throws TxRejectedError with the HTTP status to answer. */
  submitTx(tx: Uint8Array): void | Promise<void>;
  /** An out-of-process layer: whether it answers, and its own height (readiness, `noded status`). */
  status?(): { reachable: boolean; height: bigint | null };
  /** A layer with start-up work of its own (the EVM handshake) runs it beside the node's other loops. */
  start?(signal: AbortSignal, onFatal: (err: Error) => void): void;
  stopped?(): Promise<void>;
  close?(): Promise<void>;
  /** Told of each block once the node has committed it (an ABCI app's Commit comes then, so the app is never ahead of the node). */
  blockCommitted?(height: bigint): void;
}

/** A tx refused before it reaches the mempool; the message tells the sender why. */
export class TxRejectedError extends Error {
  constructor(
    message: string,
    readonly httpStatus: number,
  ) {
    super(message);
    this.name = 'TxRejectedError';
  }
}
