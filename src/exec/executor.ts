import type { ResponseCheckTx, ResponseFinalizeBlock } from 'cosmjs-types/tendermint/abci/types';
import type { StoreOp } from '../store/index.js';
import type { FilterStatus } from './filter.js';

/**
 * What executing a block gave, as ABCI 2.0's FinalizeBlock response holds it:
 * one result per tx, in the block's order (CometBFT's block_results).
 */
export type BlockResults = Pick<ResponseFinalizeBlock, 'txResults' | 'events' | 'validatorUpdates' | 'consensusParamUpdates' | 'appHash'>;

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
  /**
   * Takes the txs for the next block, whose time (Unix ns) is `time` when the
   * caller knows it, at most `maxBytes` of them when given (forced txs took the rest).
   */
  getTxs(time?: bigint, maxBytes?: number): Promise<Uint8Array[]>;
  /**
   * ev-node's FilterTxs (core/execution/execution.go): a status for each tx,
   * in order (the result has txs.length entries) — ok, remove (invalid,
   * unparsable, too big on its own: a forced tx of gibberish), or postpone
   * (valid, but the cumulative maxBytes or maxGas would be passed; 0 = no
   * limit). `hasForceIncludedTransaction` says forced txs are among them.
   * Validation failures are statuses; only a failure to filter at all throws.
   */
  filterTxs(txs: Uint8Array[], maxBytes: number, maxGas: number, hasForceIncludedTransaction: boolean): Promise<FilterStatus[]>;
  executeTxs(txs: Uint8Array[], height: bigint, time: bigint, prevStateRoot: Uint8Array): Promise<ExecResult>;
  /**
   * True when executeTxs of block N+1 may run while block N's batch is still
   * being written (a pipelined chain, src/node/chain.ts): the executor reads
   * through block N's writes itself, and the chain keeps no other block
   * uncommitted. Only a layer whose state is in the node's batch can: the kv
   * machine. A layer with state of its own (EVM, ABCI, gRPC) commits a block
   * when it executes it, or is told to (blockCommitted), so it must never run
   * ahead of the node's store.
   */
  readonly pipelined?: boolean;
  setFinal(height: bigint): Promise<void>;
  /**
   * Queues a tx sent to the node (an out-of-process layer may check it first);
   * throws TxRejectedError with the HTTP status to answer. An ABCI app's
   * accepting CheckTx response comes back.
   */
  submitTx(tx: Uint8Array): void | Promise<void | ResponseCheckTx>;
  /** An out-of-process layer: whether it answers, and its own height (readiness, `noded status`). */
  status?(): { reachable: boolean; height: bigint | null };
  /** A layer with start-up work of its own (the EVM handshake) runs it beside the node's other loops. */
  start?(signal: AbortSignal, onFatal: (err: Error) => void): void;
  stopped?(): Promise<void>;
  close?(): Promise<void>;
  /**
   * The results of the block at `height` (its txs given), or null when the
   * layer kept none for it; absent on a layer that has no per-tx results to give (evm).
   */
  blockResults?(height: bigint, txs: Uint8Array[]): Promise<BlockResults | null>;
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

/** The app refused a tx in CheckTx: its code, codespace and log, for HTTP 400 and broadcast_tx_sync. */
export class CheckTxRejectedError extends TxRejectedError {
  constructor(readonly response: ResponseCheckTx) {
    const codespace = response.codespace ? `, codespace ${response.codespace}` : '';
    super(`the app rejected the tx in CheckTx: ${response.log || '(no log)'} (code ${response.code}${codespace})`, 400);
    this.name = 'CheckTxRejectedError';
  }
}

/**
 * A tx the node cannot take now but can soon (production paused at the
 * pending cap, mempool full): 503 with Retry-After, nothing acknowledged.
 */
export class TxBackpressureError extends TxRejectedError {
  constructor(
    message: string,
    /** How long the sender should wait before trying again, in whole seconds (Retry-After). */
    readonly retryAfterSeconds: number,
  ) {
    super(message, 503);
    this.name = 'TxBackpressureError';
  }
}
