import { HashFilter } from '../../store/hash-filter.js';

/**
 * Layers of 64K, 256K, 1M, 4M and 16M keys (3 bytes a key): past 21M keys the
 * last layer's false positives climb, and more writes read their old value.
 */
const MAX_LAYERS = 5;
/**
 * First word of the filter's bytes: a filter saved with other constants or
 * hashes (0x6b660001: a Bloom filter of 7 probes a key over a layer's whole
 * bit array) reads back as none (the caller then rebuilds it), never as a wrong one.
 */
const FORMAT = 0x6b660002;

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
  private constructor(private readonly filter: HashFilter) {}

  static empty(): KeyFilter {
    return new KeyFilter(HashFilter.empty(MAX_LAYERS));
  }

  /** The filter as bytes, for `fromBytes`: FORMAT (4 bytes BE), then the layers (HashFilter.encode). */
  toBytes(): Uint8Array {
    const filter = this.filter.encode();
    const out = new Uint8Array(4 + filter.length);
    new DataView(out.buffer).setUint32(0, FORMAT);
    out.set(filter, 4);
    return out;
  }

  /** The filter `toBytes` wrote; null for bytes it could not have written (another format, cut short). */
  static fromBytes(bytes: Uint8Array): KeyFilter | null {
    if (bytes.length < 4 || new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0) !== FORMAT) return null;
    try {
      return new KeyFilter(HashFilter.decode(bytes.subarray(4), MAX_LAYERS));
    } catch {
      return null;
    }
  }

  /** Adds a key, the `length` bytes of `bytes` from `from`; false when it surely was not in the set before. */
  add(bytes: Uint8Array, length = bytes.length, from = 0): boolean {
    // Two independent 32-bit hashes: FNV-1a, then two differently seeded finalizers.
    let h = 0x811c9dc5;
    for (let i = from; i < from + length; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
    return this.filter.add(mix(h), mix(h ^ 0x9e3779b9));
  }
}
