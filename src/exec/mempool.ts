import { hash } from 'node:crypto';
import type { TxLocation } from '../store/index.js';
import { TxRejectedError } from './executor.js';

export interface MempoolLimits {
  maxTxs: number;
  /** Largest tx accepted, in bytes. */
  maxTxBytes: number;
}

/** Where committed txs are found: the store's tx-hash index, and its height to tell whether a block landed meanwhile. */
export interface CommittedTxs {
  height(): bigint;
  getTxLocation(txHash: Uint8Array): Promise<TxLocation | null>;
}

/**
 * A tx the node holds already: waiting in the mempool or committed in a block.
 * CometBFT refuses both with ErrTxInCache (mempool/errors.go), its cache
 * keeping committed txs too (mempool/clist_mempool.go, Update).
 */
export class TxAlreadyKnownError extends TxRejectedError {
  /** Where the tx is, in words: "waiting in the mempool" or "committed in block N (index I)". */
  readonly where: string;

  constructor(readonly location: TxLocation | null) {
    const where = location ? `committed in block ${location.height} (index ${location.index})` : 'waiting in the mempool';
    super(location ? `tx already ${where}` : 'tx already in mempool', 409);
    this.where = where;
    this.name = 'TxAlreadyKnownError';
  }
}

/**
 * Txs waiting for a block, first in first out, each at most once, and never
 * one a committed block holds.
 */
export class Mempool {
  private readonly txs = new Map<string, Uint8Array>();
  private totalBytes = 0;
  /** Ids of txs taken for the block being built: not in the store's index yet, and not to be queued again. */
  private readonly inBlock = new Set<string>();

  constructor(
    private readonly limits: MempoolLimits,
    private readonly committed: CommittedTxs,
  ) {}

  get size(): number {
    return this.txs.size;
  }

  /** Bytes of the txs waiting. */
  get bytes(): number {
    return this.totalBytes;
  }

  async add(tx: Uint8Array): Promise<void> {
    if (tx.length > this.limits.maxTxBytes) {
      throw new TxRejectedError(`tx is ${tx.length} bytes; the limit is ${this.limits.maxTxBytes}`, 413);
    }
    const digest = hash('sha256', tx, 'buffer');
    const id = digest.toString('binary');
    this.refuseIfFullOrHeld(id);
    // A block committed while the index was read may hold the tx and have cleared it from inBlock: read again.
    for (let height = -1n; height !== this.committed.height(); ) {
      height = this.committed.height();
      const location = await this.committed.getTxLocation(digest);
      if (location) throw new TxAlreadyKnownError(location);
    }
    // Other adds ran during the read.
    this.refuseIfFullOrHeld(id);
    this.txs.set(id, tx);
    this.totalBytes += tx.length;
  }

  private refuseIfFullOrHeld(id: string): void {
    if (this.txs.size >= this.limits.maxTxs) {
      throw new TxRejectedError(
        `mempool full (${this.limits.maxTxs} txs waiting); retry after the next block or raise --node.node.mempool_max_txs`,
        503,
      );
    }
    if (this.txs.has(id) || this.inBlock.has(id)) throw new TxAlreadyKnownError(null);
  }

  /** Whether the tx waits here or in the block being built. */
  holds(tx: Uint8Array): boolean {
    const id = hash('sha256', tx, 'binary');
    return this.txs.has(id) || this.inBlock.has(id);
  }

  /** Up to `limit` waiting txs, oldest first, left in the mempool (unconfirmed_txs). */
  peek(limit: number): Uint8Array[] {
    const out: Uint8Array[] = [];
    for (const tx of this.txs.values()) {
      if (out.length >= limit) break;
      out.push(tx);
    }
    return out;
  }

  /** Removes and returns up to `maxCount` txs totalling at most `maxBytes`, oldest first, for the next block. */
  take(maxCount: number, maxBytes: number): Uint8Array[] {
    const out: Uint8Array[] = [];
    let bytes = 0;
    for (const [id, tx] of this.txs) {
      if (out.length >= maxCount || bytes + tx.length > maxBytes) break;
      out.push(tx);
      bytes += tx.length;
      this.txs.delete(id);
      this.inBlock.add(id);
    }
    this.totalBytes -= bytes;
    return out;
  }

  /** The block built from the last `take` is committed: the store's index now answers for its txs. */
  blockCommitted(): void {
    this.inBlock.clear();
  }
}
