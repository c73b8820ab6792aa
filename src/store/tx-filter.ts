import type { TxId } from '../types/index.js';
import { HashFilter } from './hash-filter.js';

/**
 * Layers of 64K, 256K and 1M txs: about 4 MB once 1.4M txs are committed, the
 * most the filter takes (the node's resident memory stays flat as the chain
 * grows); past that its false positives climb and more admissions read the
 * index, as they all did before the filter.
 */
const MAX_LAYERS = 3;
/**
 * A block's batch carries a snapshot once this many txs, or this many blocks,
 * went in since the last one: what a restart after a crash re-reads (a second
 * or so), against a few bytes written a tx.
 */
const SNAPSHOT_TXS = 1 << 20;
const SNAPSHOT_BLOCKS = 10_000;

/** A sha256 digest's first two 32-bit words: uniformly random, so they serve as the filter's two hashes. */
const word = (d: Uint8Array, at: number) => ((d[at]! << 24) | (d[at + 1]! << 16) | (d[at + 2]! << 8) | d[at + 3]!) >>> 0;
/** word() of a digest held as a TxId (one char a byte). */
const idWord = (id: TxId, at: number) =>
  ((id.charCodeAt(at) << 24) | (id.charCodeAt(at + 1) << 16) | (id.charCodeAt(at + 2) << 8) | id.charCodeAt(at + 3)) >>> 0;

/**
 * Which txs the tx-hash index may hold: every tx of every committed block is
 * in it, so a "no" answers tx admission without a LevelDB read (a 1,000-key
 * index read a block of 1,000 txs was 6.5% of the producer figure's CPU
 * profile, and any read at all costs a thread-pool round trip: with one
 * false positive in 10,000 a layer, most blocks' txs need none). The store adds a block's txs before it writes the block, and
 * keeps a snapshot with the height it covers (TxFilterSnapshot); on open it
 * adds the txs of the blocks above that height.
 */
export class TxIndexFilter {
  private txsSinceSnapshot = 0;
  private blocksSinceSnapshot = 0;

  private constructor(private readonly filter: HashFilter) {}

  static empty(): TxIndexFilter {
    return new TxIndexFilter(HashFilter.empty(MAX_LAYERS));
  }

  /** The filter of a snapshot's bytes (snapshot()), and the height it covers. */
  static decode(snapshot: Uint8Array): { filter: TxIndexFilter; height: bigint } {
    if (snapshot.length < 8) throw new Error('tx filter snapshot: truncated');
    const height = new DataView(snapshot.buffer, snapshot.byteOffset, snapshot.byteLength).getBigUint64(0);
    return { filter: new TxIndexFilter(HashFilter.decode(snapshot.subarray(8), MAX_LAYERS)), height };
  }

  /** False when no committed block holds the tx whose sha256 is `hash`. */
  mayHold(hash: Uint8Array): boolean {
    return this.filter.mayHold(word(hash, 0), word(hash, 4));
  }

  /** Adds the tx of this id (its sha256, as the store's commit has it: no bytes made a tx). */
  add(id: TxId): void {
    this.filter.add(idWord(id, 0), idWord(id, 4));
  }

  /** Counts a block's txs, added already: true when its batch should carry a snapshot. */
  blockAdded(txs: number): boolean {
    this.txsSinceSnapshot += txs;
    this.blocksSinceSnapshot++;
    return this.txsSinceSnapshot >= SNAPSHOT_TXS || this.blocksSinceSnapshot >= SNAPSHOT_BLOCKS;
  }

  /** Whether txs were added since the last snapshot. */
  get changed(): boolean {
    return this.blocksSinceSnapshot > 0;
  }

  /** The snapshot of every tx added so far, covering the blocks up to `height`: height (8 BE) ‖ the filter. */
  snapshot(height: bigint): Uint8Array {
    const filter = this.filter.encode();
    const out = new Uint8Array(8 + filter.length);
    new DataView(out.buffer).setBigUint64(0, height);
    out.set(filter, 8);
    this.txsSinceSnapshot = 0;
    this.blocksSinceSnapshot = 0;
    return out;
  }
}
