import type { TxLocation } from '../store/index.js';
import { txHash, type Block } from '../types/index.js';
import type { Chain } from './chain.js';

const key = (hash: Uint8Array) => Buffer.from(hash.buffer, hash.byteOffset, hash.byteLength).toString('hex');

/**
 * The callers waiting for txs to be committed (`POST /tx?wait=commit`,
 * broadcast_tx_commit), matched by hash against each committed block's txs:
 * one chain listener for all of them, no store read per waiter per block, so
 * a thousand waiting senders cost a block no more than one.
 */
export class CommitWaiters {
  private readonly waiting = new Map<string, Array<(at: TxLocation) => void>>();

  constructor(chain: Pick<Chain, 'onBlock'>) {
    chain.onBlock((block) => this.committed(block));
  }

  /**
   * `landed` resolves where the tx with this hash lands once a block holding it
   * is committed, or rejects after `timeoutMs`; call before submitting the tx so
   * its block cannot slip by. `cancel` stops waiting (the submission was refused).
   */
  wait(hash: Uint8Array, timeoutMs: number): { landed: Promise<TxLocation>; cancel: () => void } {
    const k = key(hash);
    let done = () => {};
    const landed = new Promise<TxLocation>((resolve, reject) => {
      const timer = setTimeout(() => {
        done();
        reject(new Error(`tx ${k.toUpperCase()} not committed within ${timeoutMs} ms`));
      }, timeoutMs);
      // A node shutting down does not wait for it.
      timer.unref();
      const waiter = (at: TxLocation) => {
        done();
        resolve(at);
      };
      done = () => {
        clearTimeout(timer);
        const left = this.waiting.get(k)?.filter((w) => w !== waiter) ?? [];
        if (left.length) this.waiting.set(k, left);
        else this.waiting.delete(k);
      };
      this.waiting.set(k, [...(this.waiting.get(k) ?? []), waiter]);
    });
    return { landed, cancel: () => done() };
  }

  private committed(block: Block): void {
    if (this.waiting.size === 0) return;
    const height = block.header!.header!.height;
    block.data!.txs.forEach((tx, index) => {
      const waiters = this.waiting.get(key(txHash(tx)));
      if (waiters) for (const waiter of waiters) waiter({ height, index });
    });
  }
}
