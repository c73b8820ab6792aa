/** Entries the first layer holds before a layer four times its size is added. */
const FIRST_LAYER_ENTRIES = 1 << 16;
/**
 * About one false positive in 10,000 per layer (a split block Bloom filter of
 * 24 bits an entry): a caller that asks of a thousand entries at once mostly
 * gets "surely not" for all of them.
 */
const BITS_PER_ENTRY = 24;
/** Bytes of a layer's header in encode(): its capacity and its count (4 BE each). */
const LAYER_HEADER_BYTES = 8;
/** 32-bit words in a block: an entry sets one bit in each word of one block. */
const BLOCK_WORDS = 8;
/** Odd multipliers that pick the bit in each word of a block (Parquet's split block Bloom filter, parquet-format BloomFilter.md). */
const SALT = new Uint32Array([0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31]);

const wordsOf = (capacity: number) => Math.ceil((capacity * BITS_PER_ENTRY) / 32 / BLOCK_WORDS) * BLOCK_WORDS;

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

  /** The layers as bytes: for each, its capacity and count (4 BE each), then its bits (little-endian words). */
  encode(): Uint8Array {
    const out = new Uint8Array(this.layers.reduce((n, layer) => n + LAYER_HEADER_BYTES + layer.bits.byteLength, 0));
    const view = new DataView(out.buffer);
    let at = 0;
    for (const layer of this.layers) {
      view.setUint32(at, layer.capacity);
      view.setUint32(at + 4, layer.count);
      at += LAYER_HEADER_BYTES;
      out.set(new Uint8Array(layer.bits.buffer, layer.bits.byteOffset, layer.bits.byteLength), at);
      at += layer.bits.byteLength;
    }
    return out;
  }

  /** The filter encode() wrote; throws on bytes it did not write. */
  static decode(bytes: Uint8Array, maxLayers: number): HashFilter {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const layers: Layer[] = [];
    for (let at = 0; at < bytes.length;) {
      if (at + LAYER_HEADER_BYTES > bytes.length) throw new Error('hash filter: truncated layer header');
      const capacity = view.getUint32(at);
      const count = view.getUint32(at + 4);
      at += LAYER_HEADER_BYTES;
      const words = wordsOf(capacity);
      if (capacity === 0 || at + words * 4 > bytes.length) throw new Error('hash filter: truncated layer');
      // A copy: the words must be aligned, and the bytes may be a view of a larger buffer.
      const bits = new Uint32Array(words);
      new Uint8Array(bits.buffer).set(bytes.subarray(at, at + words * 4));
      layers.push(new Layer(capacity, bits, count));
      at += words * 4;
    }
    if (layers.length === 0 || layers.length > maxLayers) throw new Error(`hash filter: ${layers.length} layers`);
    return new HashFilter(maxLayers, layers);
  }
}
