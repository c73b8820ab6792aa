import { endianness } from 'node:os';

/** Keys the first layer holds before a layer four times its size is added. */
const FIRST_LAYER_KEYS = 1 << 16;
/** About 1% false positives per layer. */
const BITS_PER_KEY = 10;
const PROBES = 7;
/** Each layer this many times the one before. */
const GROWTH = 4;
/**
 * First word of the filter's bytes: a filter saved with other constants or
 * hashes reads back as none (the caller then rebuilds it), never as a wrong one.
 */
const FORMAT = 0x6b660001;

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

const BIG_ENDIAN = endianness() === 'BE';

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
  private constructor(private readonly layers: Layer[]) {}

  static empty(): KeyFilter {
    return new KeyFilter([new Layer(FIRST_LAYER_KEYS)]);
  }

  /**
   * The filter as bytes, for `fromBytes`: FORMAT, the number of layers, then
   * each layer's count of keys and its bits, all 32-bit little-endian words.
   */
  toBytes(): Uint8Array {
    const out = Buffer.allocUnsafe(this.layers.reduce((size, layer) => size + 4 + layer.bits.byteLength, 8));
    out.writeUInt32LE(FORMAT, 0);
    out.writeUInt32LE(this.layers.length, 4);
    let at = 8;
    for (const layer of this.layers) {
      out.writeUInt32LE(layer.count, at);
      out.set(new Uint8Array(layer.bits.buffer, layer.bits.byteOffset, layer.bits.byteLength), at + 4);
      if (BIG_ENDIAN) out.subarray(at + 4, at + 4 + layer.bits.byteLength).swap32();
      at += 4 + layer.bits.byteLength;
    }
    return out;
  }

  /** The filter `toBytes` wrote; null for bytes it could not have written (another format, cut short). */
  static fromBytes(bytes: Uint8Array): KeyFilter | null {
    const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (buf.length < 8 || buf.readUInt32LE(0) !== FORMAT) return null;
    const layers: Layer[] = [];
    let at = 8;
    for (let i = 0, capacity = FIRST_LAYER_KEYS; i < buf.readUInt32LE(4); i++, capacity *= GROWTH) {
      const layer = new Layer(capacity);
      const end = at + 4 + layer.bits.byteLength;
      if (end > buf.length) return null;
      layer.count = buf.readUInt32LE(at);
      new Uint8Array(layer.bits.buffer).set(buf.subarray(at + 4, end));
      if (BIG_ENDIAN) Buffer.from(layer.bits.buffer).swap32();
      layers.push(layer);
      at = end;
    }
    return at === buf.length && layers.length > 0 ? new KeyFilter(layers) : null;
  }

  /** Adds a key, the first `length` bytes of `key`; false when it surely was not in the set before. */
  add(key: Uint8Array, length = key.length): boolean {
    // Two independent 32-bit hashes: FNV-1a, then two differently seeded finalizers.
    let h = 0x811c9dc5;
    for (let i = 0; i < length; i++) h = Math.imul(h ^ key[i]!, 0x01000193);
    const h1 = mix(h);
    const h2 = mix(h ^ 0x9e3779b9) | 1;
    for (const layer of this.layers) if (layer.probe(h1, h2, false)) return true; // its bits stay set: nothing to add
    let last = this.layers[this.layers.length - 1]!;
    if (last.count >= last.capacity) {
      last = new Layer(last.capacity * GROWTH);
      this.layers.push(last);
    }
    last.probe(h1, h2, true);
    last.count++;
    return false;
  }
}
