import { describe, expect, it } from 'vitest';
import { buildChain } from '../../src/node/index.js';
import { coreParts, closedAfterEach } from '../helpers/node-parts.js';

// The chain built alone (src/node/parts.ts) over a real store and the kv
// execution layer, its store's writes held back where a test says, to show
// what a pipelined chain tells while a block's batch is being written.

const closers = closedAfterEach();

const enc = (s: string) => new TextEncoder().encode(s);
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const TIME = 1_800_000_000_000_000_000n;

describe('Chain, pipelined (kv)', () => {
  it("builds the next block while a block's batch is written; tells of committed blocks only, written in order", async () => {
    const parts = await coreParts(closers);
    const chain = await buildChain(parts);
    const store = parts.store;
    const commitBlock = store.commitBlock.bind(store);
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const written: bigint[] = [];
    store.commitBlock = async (...args) => {
      const height = args[0].header!.header!.height;
      if (height === 1n) await held;
      await commitBlock(...args);
      written.push(height);
    };
    const told: bigint[] = [];
    chain.onBlock((block) => told.push(block.header!.header!.height));

    const first = await chain.build([enc('x=1')], TIME, parts.signer);
    // Block 2 overwrites block 1's key while block 1 is not in the store: the kv machine reads it from block 1's writes.
    const second = await chain.build([enc('x=2'), enc('y=1')], TIME + 1n, parts.signer);
    expect(second.block.header!.header!.height).toBe(2n);
    let thirdBuilt = false;
    const third = chain.build([], TIME + 2n, parts.signer).then((built) => {
      thirdBuilt = true;
      return built;
    });
    await new Promise(setImmediate);
    // Block 1's batch is held: nothing is committed or told, and block 3 waits (one block at most below the one built).
    expect([chain.height, store.height(), told, written, thirdBuilt]).toEqual([0n, 0n, [], [], false]);

    release();
    await first.committed;
    await second.committed;
    await (
      await third
    ).committed;
    expect(written).toEqual([1n, 2n, 3n]);
    expect(told).toEqual([1n, 2n, 3n]);
    expect(chain.height).toBe(3n);

    // The state root is the one of {x=2, y=1}, however it was reached (block 1's x=1 came out of the sum).
    const fresh = await coreParts(closers);
    const direct = await fresh.executor.executeTxs([enc('x=2'), enc('y=1')], 1n, TIME, await fresh.executor.initChain(TIME, 1n, 'parts-1'));
    expect(hex(chain.currentState.appHash)).toBe(hex(direct.stateRoot));
  });

  it('writes no block after one whose batch failed', async () => {
    const parts = await coreParts(closers);
    const chain = await buildChain(parts);
    const store = parts.store;
    const commitBlock = store.commitBlock.bind(store);
    const written: bigint[] = [];
    store.commitBlock = async (...args) => {
      const height = args[0].header!.header!.height;
      if (height === 1n) {
        await args[5];
        throw new Error('disk full');
      }
      await commitBlock(...args);
      written.push(height);
    };
    const first = await chain.build([enc('x=1')], TIME, parts.signer);
    const second = await chain.build([enc('x=2')], TIME + 1n, parts.signer);
    await expect(first.committed).rejects.toThrow('disk full');
    await expect(second.committed).rejects.toThrow('disk full');
    await expect(chain.build([], TIME + 2n, parts.signer)).rejects.toThrow('disk full');
    expect([written, chain.height, store.height()]).toEqual([[], 0n, 0n]);
  });
});
