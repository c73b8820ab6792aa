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
    const again = HashFilter.decode(filter.encode(), 3);
    expect(added.every(([h1, h2]) => again.mayHold(h1, h2))).toBe(true);
    expect(others.filter(([h1, h2]) => again.mayHold(h1, h2)).length).toBe(falsePositives);
  });

  it('stops growing at its last layer and still holds every entry added', () => {
    const filter = HashFilter.empty(1);
    const added = Array.from({ length: 100_000 }, entry);
    for (const [h1, h2] of added) filter.add(h1, h2);
    expect(added.every(([h1, h2]) => filter.mayHold(h1, h2))).toBe(true);
    expect(filter.encode().length).toBe(8 + (65_536 * 24) / 8);
  });

  it('refuses bytes it did not write', () => {
    const bytes = HashFilter.empty(2).encode();
    expect(() => HashFilter.decode(bytes.subarray(0, 100), 2)).toThrow('hash filter: truncated layer');
    expect(() => HashFilter.decode(bytes.subarray(0, 5), 2)).toThrow('hash filter: truncated layer header');
    expect(() => HashFilter.decode(new Uint8Array(0), 2)).toThrow('hash filter: 0 layers');
  });
});
