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
  /** Takes the txs waiting for the next block. */
  getTxs(): Promise<Uint8Array[]>;
  executeTxs(txs: Uint8Array[], height: bigint, time: bigint, prevStateRoot: Uint8Array): Promise<ExecResult>;
  setFinal(height: bigint): Promise<void>;
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
