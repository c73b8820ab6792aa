import { HashFilter, type LayerSize } from './hash-filter.js';
import type { StoreOp } from './store.js';

/**
 * Bytes of one saved slice of a filter's bits: below glibc malloc's default
 * mmap threshold (128 KiB). A filter saved whole was one value of up to tens
 * of megabytes, copied in JS, into LevelDB's batch, its memtable and its
 * compaction thread; each such block, once freed, raised glibc's mmap
 * threshold to its size, and every thread then kept blocks that large in its
 * arena: the soak figure's resident memory climbed ~10 MB/min over 20 minutes
 * with the JS heap flat, in steps at each save (bench/figures/soak.ts,
 * BENCH_SOAK_MINUTES=20).
 */
export const SAVED_SLICE_BYTES = 64 * 1024;

/** Most slices one block's batch carries (a batch is one buffer in LevelDB too: 256 KiB of them at most). */
const MAX_SLICES_PER_BLOCK = 4;

const slicesOfLayer = (capacity: number) => Math.ceil(HashFilter.layerBytes(capacity) / SAVED_SLICE_BYTES);

/** Bytes of a saved header before its layers: format (4 BE), height (8 BE). */
const HEADER_BYTES = 12;
/** Bytes of a saved slice before its bits: the height of the block whose batch carried it (8 BE), its layer's capacity (4 BE). */
const SLICE_HEADER_BYTES = 12;

/** The store's metadata, where the filter is saved. */
export interface FilterSaveStore {
  getMetadata(key: string): Promise<Uint8Array | null>;
  metadataOp(key: string, value: Uint8Array): StoreOp;
  writeBatch(ops: StoreOp[]): Promise<void>;
}

/** A saved filter read back, and the height up to which it holds every entry added by a block. */
export interface SavedFilter {
  filter: HashFilter;
  height: bigint;
}

/**
 * Saves a HashFilter that grows with the chain a slice at a time, each slice
 * in the batch of a block, so no value the store writes is larger than
 * SAVED_SLICE_BYTES: about one pass over every slice each `passBlocks`
 * blocks, round-robin, with a header (the layers' sizes) in each batch that
 * carries slices. A filter only ever gains bits, so a slice copied when block
 * h was executed holds every entry added up to h: read back, the slices make
 * a filter that holds every entry up to the oldest slice's height, and the
 * caller adds the entries of the blocks after it.
 *
 * Keys: `<name>` for the header (format, height, each layer's capacity and
 * count), `<name>/<layer>/<slice>` for the slices.
 */
export class SlicedFilterSaver {
  /** The slice the next save starts at, numbered over every layer in order. */
  private next = 0;
  /** Slices due and not yet saved: each block adds its share of a pass. */
  private due = 0;
  /**
   * The slices, from the first, that the store holds: those read back by
   * `load`, and those saved since. The others (all of a filter made anew, a
   * new layer's) are saved first, MAX_SLICES_PER_BLOCK a block, so the next
   * start need not make the filter again.
   */
  private stored = 0;

  constructor(
    private readonly name: string,
    /** First word of the header: a filter saved another way reads back as none. */
    private readonly format: number,
    private readonly passBlocks: number,
  ) {}

  private sliceKey(layer: number, slice: number): string {
    return `${this.name}/${layer}/${slice}`;
  }

  /** The ops that save the slices due with block `height`, whose entries `filter` holds already; none when none is due. */
  ops(store: FilterSaveStore, filter: HashFilter, height: bigint): StoreOp[] {
    const sizes = filter.layerSizes();
    const slicesOf = sizes.map((s) => slicesOfLayer(s.capacity));
    const total = slicesOf.reduce((a, b) => a + b, 0);
    let count: number;
    if (this.stored < total) {
      this.next = this.stored;
      count = Math.min(MAX_SLICES_PER_BLOCK, total - this.stored);
      this.stored += count;
    } else {
      this.due += total / this.passBlocks;
      count = Math.min(MAX_SLICES_PER_BLOCK, Math.floor(this.due));
      this.due -= count;
    }
    const ops: StoreOp[] = [];
    for (let i = 0; i < count; i++) {
      if (this.next >= total) this.next = 0;
      let slice = this.next++;
      let layer = 0;
      while (slice >= slicesOf[layer]!) slice -= slicesOf[layer++]!;
      const bits = filter.bitsOf(layer, slice * SAVED_SLICE_BYTES, SAVED_SLICE_BYTES);
      const value = new Uint8Array(SLICE_HEADER_BYTES + bits.length);
      const view = new DataView(value.buffer);
      view.setBigUint64(0, height);
      view.setUint32(8, sizes[layer]!.capacity);
      value.set(bits, SLICE_HEADER_BYTES);
      ops.push(store.metadataOp(this.sliceKey(layer, slice), value));
    }
    if (ops.length > 0) ops.push(store.metadataOp(this.name, this.header(sizes, height)));
    return ops;
  }

  private header(sizes: LayerSize[], height: bigint): Uint8Array {
    const out = new Uint8Array(HEADER_BYTES + 8 * sizes.length);
    const view = new DataView(out.buffer);
    view.setUint32(0, this.format);
    view.setBigUint64(4, height);
    sizes.forEach((s, i) => {
      view.setUint32(HEADER_BYTES + 8 * i, s.capacity);
      view.setUint32(HEADER_BYTES + 8 * i + 4, s.count);
    });
    return out;
  }

  /**
   * The filter the saved slices make, and the oldest slice's height; null
   * when there is none to use: no header, another format, a slice missing or
   * of another layer size, or anything saved past `tip` (which a block's
   * batch never writes). Reads one slice at a time into the filter: no copy
   * of the whole is made.
   */
  async load(store: FilterSaveStore, maxLayers: number, tip: bigint): Promise<SavedFilter | null> {
    const header = await store.getMetadata(this.name);
    if (!header || header.length < HEADER_BYTES || (header.length - HEADER_BYTES) % 8 !== 0) return null;
    const view = new DataView(header.buffer, header.byteOffset, header.byteLength);
    if (view.getUint32(0) !== this.format || view.getBigUint64(4) > tip) return null;
    const sizes: LayerSize[] = [];
    for (let at = HEADER_BYTES; at < header.length; at += 8) sizes.push({ capacity: view.getUint32(at), count: view.getUint32(at + 4) });
    let filter: HashFilter;
    try {
      filter = HashFilter.withLayers(sizes, maxLayers);
    } catch {
      return null;
    }
    let oldest = tip;
    for (const [layer, { capacity }] of sizes.entries()) {
      const layerBytes = HashFilter.layerBytes(capacity);
      for (let slice = 0; slice * SAVED_SLICE_BYTES < layerBytes; slice++) {
        const value = await store.getMetadata(this.sliceKey(layer, slice));
        const expected = Math.min(SAVED_SLICE_BYTES, layerBytes - slice * SAVED_SLICE_BYTES);
        if (!value || value.length !== SLICE_HEADER_BYTES + expected) return null;
        const slot = new DataView(value.buffer, value.byteOffset, value.byteLength);
        const height = slot.getBigUint64(0);
        if (slot.getUint32(8) !== capacity || height > tip) return null;
        if (height < oldest) oldest = height;
        filter.setBits(layer, slice * SAVED_SLICE_BYTES, value.subarray(SLICE_HEADER_BYTES));
      }
    }
    this.stored = sizes.reduce((n, { capacity }) => n + slicesOfLayer(capacity), 0);
    return { filter, height: oldest };
  }

  /**
   * Saves now, a few slices a batch, every slice the store lacks of a filter
   * that holds every entry up to `height` (one just made again from the
   * blocks or the state): otherwise a node that does not commit blocks soon
   * after it starts (an idle or stopped chain, a crash loop) would make the
   * filter again at each start.
   */
  async saveMissing(store: FilterSaveStore, filter: HashFilter, height: bigint): Promise<void> {
    const total = filter.layerSizes().reduce((n, { capacity }) => n + slicesOfLayer(capacity), 0);
    while (this.stored < total) await store.writeBatch(this.ops(store, filter, height));
  }
}
