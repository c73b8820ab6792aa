/** Entries the first layer holds before a layer four times its size is added. */
const FIRST_LAYER_ENTRIES = 1 << 16;
/**
 * About one false positive in 10,000 per layer (a split block Bloom filter of
 * 24 bits an entry): a caller that asks of a thousand entries at once mostly
 * gets "surely not" for all of them.
 */
const BITS_PER_ENTRY = 24;
/** 32-bit words in a block: an entry sets one bit in each word of one block. */
const BLOCK_WORDS = 8;
/** Odd multipliers that pick the bit in each word of a block (Parquet's split block Bloom filter, parquet-format BloomFilter.md). */
const SALT = new Uint32Array([0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31]);

const wordsOf = (capacity: number) => Math.ceil((capacity * BITS_PER_ENTRY) / 32 / BLOCK_WORDS) * BLOCK_WORDS;

/** A layer's size: the entries it was made for, and how many it took. */
export interface LayerSize {
  capacity: number;
  count: number;
}

/**
 * One Bloom filter of a fixed number of entries, split in blocks of 256 bits:
 * an entry's bits all lie in one block (one cache line), so a probe reads one
 * place in memory instead of seven.
 */
class Layer {
  private readonly blocks: number;

  constructor(
    readonly capacity: number,
    readonly bits: Uint32Array = new Uint32Array(wordsOf(capacity)),
    public count = 0,
  ) {
    this.blocks = bits.length / BLOCK_WORDS;
  }

  /** Sets (`set`) or tests the entry's bits, given its two hashes. */
  probe(h1: number, h2: number, set: boolean): boolean {
    const base = ((h1 >>> 0) % this.blocks) * BLOCK_WORDS;
    for (let i = 0; i < BLOCK_WORDS; i++) {
      const mask = 1 << (Math.imul(h2, SALT[i]!) >>> 27);
      if (set) this.bits[base + i]! |= mask;
      else if ((this.bits[base + i]! & mask) === 0) return false;
    }
    return true;
  }
}

/**
 * Which entries may be in a set that only grows, each entry given as two
 * independent 32-bit hashes: never a false negative, about 0.01% false
 * positives per layer. A scalable Bloom filter: when a layer is full the next one, four
 * times larger, takes the new entries, so memory follows the number of entries
 * (about 3 bytes an entry) without knowing it in advance, up to `maxLayers`;
 * past that the last layer takes every new entry and its false positives climb
 * toward 100%: a bounded memory, and "may hold" answers that stay true.
 */
export class HashFilter {
  private constructor(
    private readonly maxLayers: number,
    private readonly layers: Layer[],
  ) {}

  static empty(maxLayers: number): HashFilter {
    return new HashFilter(maxLayers, [new Layer(FIRST_LAYER_ENTRIES)]);
  }

  /** Adds an entry; false when it surely was not in the set before. */
  add(h1: number, h2: number): boolean {
    if (this.mayHold(h1, h2)) return true; // its bits stay set: nothing to add
    let last = this.layers[this.layers.length - 1]!;
    if (last.count >= last.capacity && this.layers.length < this.maxLayers) {
      last = new Layer(last.capacity * 4);
      this.layers.push(last);
    }
    last.probe(h1, h2, true);
    last.count++;
    return false;
  }

  /** False when the entry is surely not in the set. */
  mayHold(h1: number, h2: number): boolean {
    for (const layer of this.layers) if (layer.probe(h1, h2, false)) return true;
    return false;
  }

  /** Each layer's capacity and count, oldest first: what `withLayers` needs besides the bits. */
  layerSizes(): LayerSize[] {
    return this.layers.map(({ capacity, count }) => ({ capacity, count }));
  }

  /** Bytes of the bits of a layer of `capacity` entries. */
  static layerBytes(capacity: number): number {
    return wordsOf(capacity) * 4;
  }

  /** A copy of up to `length` bytes of layer `layer`'s bits from `offset` (the words' bytes in memory order). */
  bitsOf(layer: number, offset: number, length: number): Uint8Array {
    const { bits } = this.layers[layer]!;
    return new Uint8Array(bits.buffer, bits.byteOffset, bits.byteLength).slice(offset, offset + length);
  }

  /** A filter of layers of these sizes with no bit set, for `setBits` to fill (a saved filter read back a part at a time). */
  static withLayers(sizes: readonly LayerSize[], maxLayers: number): HashFilter {
    if (sizes.length === 0 || sizes.length > maxLayers || sizes.some((s) => s.capacity <= 0)) throw new Error(`hash filter: ${sizes.length} layers`);
    return new HashFilter(
      maxLayers,
      sizes.map((s) => new Layer(s.capacity, undefined, s.count)),
    );
  }

  /** Sets the bits `bytes` holds (bitsOf's bytes) in layer `layer` from `offset`; the bits already set stay set. */
  setBits(layer: number, offset: number, bytes: Uint8Array): void {
    const { bits } = this.layers[layer]!;
    const target = new Uint8Array(bits.buffer, bits.byteOffset, bits.byteLength);
    if (offset + bytes.length > target.length) throw new Error('hash filter: bits past the end of the layer');
    for (let i = 0; i < bytes.length; i++) target[offset + i]! |= bytes[i]!;
  }
}
