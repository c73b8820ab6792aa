import { describe, expect, it } from 'vitest';
import { KeyFilter } from '../../src/exec/kv/key-filter.js';

const key = (tag: string, i: number) => new TextEncoder().encode(`${tag}-${i}`);

describe('KeyFilter', () => {
  it('never misses a key it was given, across its growing layers, and rarely claims one it was not', () => {
    const filter = KeyFilter.empty();
    const n = 400_000; // past the first two layers (65,536 and 262,144 keys)
    let falsePositives = 0;
    for (let i = 0; i < n; i++) if (filter.add(key('in', i))) falsePositives++;
    expect(falsePositives / n).toBeLessThan(0.05);
    for (let i = 0; i < n; i++) if (!filter.add(key('in', i))) expect.unreachable(`key ${i} missed`);
  });

  it('reads back from its bytes with every key it held, and refuses bytes it did not write', () => {
    const filter = KeyFilter.empty();
    const n = 100_000; // two layers
    for (let i = 0; i < n; i++) filter.add(key('in', i));
    const bytes = filter.toBytes();
    const copy = KeyFilter.fromBytes(bytes)!;
    for (let i = 0; i < n; i++) if (!copy.add(key('in', i))) expect.unreachable(`key ${i} missed`);
    expect(Buffer.from(copy.toBytes()).equals(bytes)).toBe(true);
    expect(KeyFilter.fromBytes(bytes.subarray(0, bytes.length - 1))).toBeNull();
    expect(KeyFilter.fromBytes(Buffer.concat([bytes, new Uint8Array(1)]))).toBeNull();
    expect(KeyFilter.fromBytes(new Uint8Array(bytes.length))).toBeNull();
  });
});
