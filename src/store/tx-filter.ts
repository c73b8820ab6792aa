import type { TxId } from '../types/index.js';
import { SlicedFilterSaver, type FilterSaveStore } from './filter-save.js';
import { HashFilter } from './hash-filter.js';
import type { StoreOp } from './store.js';

/**
 * Layers of 64K, 256K and 1M txs: about 4 MB once 1.4M txs are committed, the
 * most the filter takes (the node's resident memory stays flat as the chain
 * grows); past that its false positives climb and more admissions read the
 * index, as they all did before the filter.
 */
const MAX_LAYERS = 3;
/**
 * Blocks over which the filter is saved once whole, a slice in the batch of a
 * block every few blocks (SlicedFilterSaver): what a restart after a crash
 * re-reads, about a second at 1,000 txs a block.
 */
const SAVE_PASS_BLOCKS = 1_000;
/**
 * First word of the saved filter's header; a filter saved another way (whole,
 * its height first, before this format) reads back as none and is made again
 * from every block once.
 */
const FORMAT = 0x74780001;

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
 * false positive in 10,000 a layer, most blocks' txs need none). The store
 * adds a block's txs before it writes the block, and saves the filter a slice
 * at a time in the blocks' batches; on open it adds the txs of the blocks
 * above the oldest slice.
 */
export class TxIndexFilter {
  private constructor(
    private readonly filter: HashFilter,
    private readonly saver: SlicedFilterSaver,
  ) {}

  /** The filter saved under the store's metadata key `key`, and the height up to which it holds every tx; an empty one at height 0 when none is usable. */
  static async load(store: FilterSaveStore, key: string, tip: bigint): Promise<{ filter: TxIndexFilter; height: bigint }> {
    const saver = new SlicedFilterSaver(key, FORMAT, SAVE_PASS_BLOCKS);
    const saved = await saver.load(store, MAX_LAYERS, tip);
    return { filter: new TxIndexFilter(saved?.filter ?? HashFilter.empty(MAX_LAYERS), saver), height: saved?.height ?? 0n };
  }

  /** False when no committed block holds the tx whose sha256 is `hash`. */
  mayHold(hash: Uint8Array): boolean {
    return this.filter.mayHold(word(hash, 0), word(hash, 4));
  }

  /** mayHold of the tx of this id. */
  mayHoldId(id: TxId): boolean {
    return this.filter.mayHold(idWord(id, 0), idWord(id, 4));
  }

  /** Adds the tx of this id (its sha256, as the store's commit has it: no bytes made a tx). */
  add(id: TxId): void {
    this.filter.add(idWord(id, 0), idWord(id, 4));
  }

  /** Saves now every slice the store lacks (the filter was made again from the blocks up to `height`). */
  saveMissing(store: FilterSaveStore, height: bigint): Promise<void> {
    return this.saver.saveMissing(store, this.filter, height);
  }

  /** The ops that save the slices due with block `height`, whose txs were added already. */
  saveOps(store: FilterSaveStore, height: bigint): StoreOp[] {
    return this.saver.ops(store, this.filter, height);
  }
}
