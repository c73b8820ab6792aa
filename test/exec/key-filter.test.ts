import { describe, expect, it } from 'vitest';
import { KeyFilter } from '../../src/exec/kv/key-filter.js';
import type { StoreOp } from '../../src/store/index.js';

const key = (tag: string, i: number) => new TextEncoder().encode(`${tag}-${i}`);

describe('KeyFilter', () => {
  it('never misses a key it was given, across its growing layers, and rarely claims one it was not', () => {
    const filter = KeyFilter.empty('keys', 100);
    const n = 400_000; // past the first two layers (65,536 and 262,144 keys)
    let falsePositives = 0;
    for (let i = 0; i < n; i++) if (filter.add(key('in', i))) falsePositives++;
    expect(falsePositives / n).toBeLessThan(0.05);
    for (let i = 0; i < n; i++) if (!filter.add(key('in', i))) expect.unreachable(`key ${i} missed`);
  });

  it('is saved a slice at a time, none above 64 KiB, and reads back with every key it held; refuses what it did not save', async () => {
    const filter = KeyFilter.empty('keys', 100);
    const n = 100_000; // two layers: 3 + 12 slices of 64 KiB
    for (let i = 0; i < n; i++) filter.add(key('in', i));
    const metadata = new Map<string, Uint8Array>();
    const store = {
      getMetadata: async (k: string) => metadata.get(k) ?? null,
      metadataOp: (k: string, value: Uint8Array): StoreOp => {
        metadata.set(k, value); // applied at once: each batch here commits
        return { type: 'put', key: new TextEncoder().encode(k), value };
      },
      writeBatch: async () => undefined,
    };
    // A filter made anew is saved first, four slices a block, then a slice each few blocks.
    const perBlock = [1n, 2n, 3n, 4n, 5n].map((height) => filter.saveOps(store, height).length);
    expect(perBlock).toEqual([5, 5, 5, 4, 0]); // four slices and the header; the 15th slice in block 4
    for (const value of metadata.values()) expect(value.length).toBeLessThanOrEqual(64 * 1024 + 12);
    const loaded = (await KeyFilter.load(store, 'keys', 100, 5n))!;
    expect(loaded.height).toBe(1n); // the oldest slice's block
    for (let i = 0; i < n; i++) if (!loaded.keys.add(key('in', i))) expect.unreachable(`key ${i} missed`);

    // Saved past the tip (no batch writes that), a slice missing, another format: none to use.
    expect(await KeyFilter.load(store, 'keys', 100, 3n)).toBeNull();
    const slice = metadata.get('keys/1/11')!;
    metadata.delete('keys/1/11');
    expect(await KeyFilter.load(store, 'keys', 100, 5n)).toBeNull();
    metadata.set('keys/1/11', slice);
    const header = metadata.get('keys')!;
    metadata.set('keys', Buffer.concat([Buffer.from([0, 0, 0, 0]), header.subarray(4)]));
    expect(await KeyFilter.load(store, 'keys', 100, 5n)).toBeNull();
  });
});
