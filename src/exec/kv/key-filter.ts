/** Keys the first layer holds before a layer four times its size is added. */
const FIRST_LAYER_KEYS = 1 << 16;
/** About 1% false positives per layer. */
const BITS_PER_KEY = 10;
const PROBES = 7;

/** One Bloom filter of a fixed number of keys. */
class Layer {
  readonly bits: Uint32Array;
  readonly size: number;
  count = 0;

  constructor(readonly capacity: number) {
    this.size = capacity * BITS_PER_KEY;
    this.bits = new Uint32Array(Math.ceil(this.size / 32));
  }

  /** Sets (`set`) or tests the key's bits, given its two hashes. */
  probe(h1: number, h2: number, set: boolean): boolean {
    for (let i = 0; i < PROBES; i++) {
      const bit = (h1 + Math.imul(i, h2)) >>> 0;
      const at = bit % this.size;
      const mask = 1 << (at & 31);
      if (set) this.bits[at >>> 5]! |= mask;
      else if ((this.bits[at >>> 5]! & mask) === 0) return false;
    }
    return true;
  }
}

/** murmur3's finalizer: spreads every input bit over the whole word. */
function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Which keys may be in a set that only grows: never a false negative, about
 * 1% false positives per layer. A scalable Bloom filter: when a layer is full
 * the next one, four times larger, takes the new keys, so memory follows the
 * number of keys (about 1.3 bytes a key) without knowing it in advance.
 */
export class KeyFilter {
  private readonly layers = [new Layer(FIRST_LAYER_KEYS)];

  /** Adds a key; false when it surely was not in the set before. */
  add(key: Uint8Array): boolean {
    // Two independent 32-bit hashes: FNV-1a, then two differently seeded finalizers.
    let h = 0x811c9dc5;
    for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key[i]!, 0x01000193);
    const h1 = mix(h);
    const h2 = mix(h ^ 0x9e3779b9) | 1;
    for (const layer of this.layers) if (layer.probe(h1, h2, false)) return true; // its bits stay set: nothing to add
    let last = this.layers[this.layers.length - 1]!;
    if (last.count >= last.capacity) {
      last = new Layer(last.capacity * 4);
      this.layers.push(last);
    }
    last.probe(h1, h2, true);
    last.count++;
    return false;
  }
}
