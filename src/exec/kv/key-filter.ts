import { SlicedFilterSaver, type FilterSaveStore } from '../../store/filter-save.js';
import { HashFilter } from '../../store/hash-filter.js';
import type { StoreOp } from '../../store/index.js';

/**
 * Layers of 64K, 256K, 1M, 4M and 16M keys (3 bytes a key): past 21M keys the
 * last layer's false positives climb, and more writes read their old value.
 */
const MAX_LAYERS = 5;
/**
 * First word of the saved filter's header: a filter saved with other constants
 * or hashes, or another way (0x6b660001: a Bloom filter of 7 probes a key over
 * a layer's whole bit array; 0x6b660002: saved whole, its height first) reads
 * back as none (the caller then rebuilds it), never as a wrong one.
 */
const FORMAT = 0x6b660003;

/** murmur3's finalizer: spreads every input bit over the whole word. */
function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Which keys of the kv state may be there already: never a false negative,
 * about one false positive in 10,000 a layer (HashFilter: each key's bits in
 * one cache line, where probes spread over a megabyte-sized layer were 4% of
 * the producer figure's CPU profile, and 1% false positives a store read a
 * block).
 */
export class KeyFilter {
  private constructor(
    private readonly filter: HashFilter,
    private readonly saver: SlicedFilterSaver,
  ) {}

  /** An empty filter, saved under the store's metadata key `name` a slice each few blocks, a pass each `passBlocks` (SlicedFilterSaver). */
  static empty(name: string, passBlocks: number): KeyFilter {
    return new KeyFilter(HashFilter.empty(MAX_LAYERS), new SlicedFilterSaver(name, FORMAT, passBlocks));
  }

  /** The filter saved under `name`, and the height up to which it holds every key; null when there is none to use. */
  static async load(store: FilterSaveStore, name: string, passBlocks: number, tip: bigint): Promise<{ keys: KeyFilter; height: bigint } | null> {
    const saver = new SlicedFilterSaver(name, FORMAT, passBlocks);
    const saved = await saver.load(store, MAX_LAYERS, tip);
    return saved && { keys: new KeyFilter(saved.filter, saver), height: saved.height };
  }

  /** The ops that save the slices due with block `height`, whose keys this filter holds already. */
  saveOps(store: FilterSaveStore, height: bigint): StoreOp[] {
    return this.saver.ops(store, this.filter, height);
  }

  /** Saves now every slice the store lacks (the filter was made again from the state at `height`). */
  saveMissing(store: FilterSaveStore, height: bigint): Promise<void> {
    return this.saver.saveMissing(store, this.filter, height);
  }

  /** Adds a key, the `length` bytes of `bytes` from `from`; false when it surely was not in the set before. */
  add(bytes: Uint8Array, length = bytes.length, from = 0): boolean {
    // Two independent 32-bit hashes: FNV-1a, then two differently seeded finalizers.
    let h = 0x811c9dc5;
    for (let i = from; i < from + length; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
    return this.filter.add(mix(h), mix(h ^ 0x9e3779b9));
  }
}
