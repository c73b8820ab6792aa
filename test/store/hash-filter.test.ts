import { describe, expect, it } from 'vitest';
import { HashFilter } from '../../src/store/hash-filter.js';

/** xorshift32: uniform 32-bit words, like a sha256 digest's, without a digest a word. */
let state = 0x9e3779b9;
const next = () => {
  state ^= state << 13;
  state ^= state >>> 17;
  state ^= state << 5;
  return state >>> 0;
};
const entry = () => [next(), next()] as const;

describe('HashFilter', () => {
  it('holds every entry added, past its first layer, with about 0.01% false positives a layer, and reads back what it wrote', () => {
    const filter = HashFilter.empty(3);
    const added = Array.from({ length: 100_000 }, entry);
    for (const [h1, h2] of added) filter.add(h1, h2);
    expect(added.every(([h1, h2]) => filter.mayHold(h1, h2))).toBe(true);
    const others = Array.from({ length: 20_000 }, entry);
    const falsePositives = others.filter(([h1, h2]) => filter.mayHold(h1, h2)).length;
    expect(falsePositives).toBeLessThan(others.length * 0.002);
    // Read back as a saved filter is (src/store/filter-save.ts): the layers' sizes, then their bits in parts.
    const again = HashFilter.withLayers(filter.layerSizes(), 3);
    filter.layerSizes().forEach(({ capacity }, layer) => {
      const bytes = HashFilter.layerBytes(capacity);
      for (let at = 0; at < bytes; at += 65_536) again.setBits(layer, at, filter.bitsOf(layer, at, 65_536));
    });
    expect(added.every(([h1, h2]) => again.mayHold(h1, h2))).toBe(true);
    expect(others.filter(([h1, h2]) => again.mayHold(h1, h2)).length).toBe(falsePositives);
  });

  it('stops growing at its last layer and still holds every entry added', () => {
    const filter = HashFilter.empty(1);
    const added = Array.from({ length: 100_000 }, entry);
    for (const [h1, h2] of added) filter.add(h1, h2);
    expect(added.every(([h1, h2]) => filter.mayHold(h1, h2))).toBe(true);
    expect(filter.layerSizes().map((s) => s.capacity)).toEqual([65_536]);
    expect(HashFilter.layerBytes(65_536)).toBe((65_536 * 24) / 8);
  });

  it('refuses layers and bits it could not have saved', () => {
    expect(() => HashFilter.withLayers([], 2)).toThrow('hash filter: 0 layers');
    expect(() =>
      HashFilter.withLayers(
        [
          { capacity: 1, count: 0 },
          { capacity: 4, count: 0 },
          { capacity: 16, count: 0 },
        ],
        2,
      ),
    ).toThrow('hash filter: 3 layers');
    const filter = HashFilter.withLayers([{ capacity: 65_536, count: 0 }], 2);
    expect(() => filter.setBits(0, HashFilter.layerBytes(65_536) - 1, new Uint8Array(2))).toThrow('hash filter: bits past the end of the layer');
  });
});
