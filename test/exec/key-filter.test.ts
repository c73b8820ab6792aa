import { describe, expect, it } from 'vitest';
import { KeyFilter } from '../../src/exec/kv/key-filter.js';

const key = (tag: string, i: number) => new TextEncoder().encode(`${tag}-${i}`);

describe('KeyFilter', () => {
  it('never misses a key it was given, across its growing layers, and rarely claims one it was not', () => {
    const filter = new KeyFilter();
    const n = 400_000; // past the first two layers (65,536 and 262,144 keys)
    let falsePositives = 0;
    for (let i = 0; i < n; i++) if (filter.add(key('in', i))) falsePositives++;
    expect(falsePositives / n).toBeLessThan(0.05);
    for (let i = 0; i < n; i++) if (!filter.add(key('in', i))) expect.unreachable(`key ${i} missed`);
  });
});
