import { describe, expect, it } from 'vitest';
import { buildChain } from '../../src/node/index.js';
import { FenceRejectedError } from '../../src/ha/index.js';
import { Ed25519Key, decodeBlock, headerHash } from '../../src/types/index.js';
import { coreParts, closedAfterEach } from '../helpers/node-parts.js';

// Chain.beforeCommit, the hook the HA fence hangs on, over a real store and the kv execution layer.

const closers = closedAfterEach();

const enc = (s: string) => new TextEncoder().encode(s);
const signer = Ed25519Key.generate();
const T0 = 1_700_000_001_000_000_000n;

describe('Chain.beforeCommit', () => {
  it('sees each produced block (height, hash, parent, bytes) before it is committed', async () => {
    const chain = await buildChain(await coreParts(closers, { signer }));
    const seen: Array<{ height: bigint; hash: Uint8Array; parentHash: Uint8Array; bytes: Uint8Array }> = [];
    chain.beforeCommit = async (block) => {
      expect(chain.height).toBe(block.height - 1n);
      seen.push(block);
    };
    const first = await chain.produce([enc('a=1')], T0 + 1n, signer);
    const second = await chain.produce([enc('b=2')], T0 + 2n, signer);
    expect(seen.map((b) => b.height)).toEqual([1n, 2n]);
    expect(seen[1]!.hash).toEqual(headerHash(second.header!.header!));
    expect(seen[1]!.parentHash).toEqual(headerHash(first.header!.header!));
    expect(headerHash(decodeBlock(seen[1]!.bytes).header!.header!)).toEqual(seen[1]!.hash);
  });

  it('a refused block is dropped whole: the chain, the store and the execution layer stay at its parent', async () => {
    const parts = await coreParts(closers, { signer });
    const chain = await buildChain(parts);
    await chain.produce([enc('a=1')], T0 + 1n, signer);
    const stateBefore = chain.currentState;
    chain.beforeCommit = async (block) => {
      throw new FenceRejectedError(`block ${block.height} refused`);
    };
    await expect(chain.produce([enc('a=2')], T0 + 2n, signer)).rejects.toThrow('block 2 refused');
    expect(chain.currentState).toBe(stateBefore);
    expect(await parts.store.getBlock(2n)).toBeNull();
    // The execution layer did not run the refused block: the next one builds on block 1's state.
    chain.beforeCommit = null;
    const next = await chain.produce([enc('a=3')], T0 + 3n, signer);
    expect(next.header!.header!.height).toBe(2n);
  });
});
