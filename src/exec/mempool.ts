import { hash } from 'node:crypto';
import { TxRejectedError } from './executor.js';

export interface MempoolLimits {
  maxTxs: number;
  /** Largest tx accepted, in bytes. */
  maxTxBytes: number;
}

/** Txs waiting for a block, first in first out, each at most once. */
export class Mempool {
  private readonly txs = new Map<string, Uint8Array>();

  constructor(private readonly limits: MempoolLimits) {}

  get size(): number {
    return this.txs.size;
  }

  add(tx: Uint8Array): void {
    if (tx.length > this.limits.maxTxBytes) {
      throw new TxRejectedError(`tx is ${tx.length} bytes; the limit is ${this.limits.maxTxBytes}`, 413);
    }
    if (this.txs.size >= this.limits.maxTxs) {
      throw new TxRejectedError(
        `mempool full (${this.limits.maxTxs} txs waiting); retry after the next block or raise --node.node.mempool_max_txs`,
        503,
      );
    }
    const id = hash('sha256', tx, 'binary');
    if (this.txs.has(id)) throw new TxRejectedError('tx already in mempool', 409);
    this.txs.set(id, tx);
  }

  /** Removes and returns up to `maxCount` txs totalling at most `maxBytes`, oldest first. */
  take(maxCount: number, maxBytes: number): Uint8Array[] {
    const out: Uint8Array[] = [];
    let bytes = 0;
    for (const [id, tx] of this.txs) {
      if (out.length >= maxCount || bytes + tx.length > maxBytes) break;
      out.push(tx);
      bytes += tx.length;
      this.txs.delete(id);
    }
    return out;
  }
}
