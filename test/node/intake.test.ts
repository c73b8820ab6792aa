import { describe, expect, it } from 'vitest';
import { BlockIntake, GenesisGuard, buildChain, type Chain, type CoreParts } from '../../src/node/index.js';
import { Ed25519Key, InvalidBlockError, type Block } from '../../src/types/index.js';
import { coreParts, closedAfterEach } from '../helpers/node-parts.js';

// The chain and the block intake built alone (src/node/parts.ts) over real
// stores in temp dirs and the kv execution layer: an aggregator's chain makes
// the blocks, a full node's intake takes them as peers and DA would hand them.

const closers = closedAfterEach();

const enc = (s: string) => new TextEncoder().encode(s);
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const signer = Ed25519Key.generate();
const T0 = 1_700_000_001_000_000_000n;

/** An aggregator's chain with `n` blocks of one kv tx each. */
async function aggregatorBlocks(n: number): Promise<{ chain: Chain; blocks: Block[] }> {
  const chain = await buildChain(await coreParts(closers, { signer }));
  const blocks: Block[] = [];
  for (let h = 1; h <= n; h++) blocks.push(await chain.produce([enc(`k${h}=v${h}`)], T0 + BigInt(h), signer));
  return { chain, blocks };
}

/** A full node's chain and intake, of the same genesis. */
async function fullNode(): Promise<{ parts: CoreParts; chain: Chain; intake: BlockIntake }> {
  const parts = await coreParts(closers, { signer });
  const chain = await buildChain(parts);
  const intake = new BlockIntake(chain, parts.store, null, new GenesisGuard(parts.genesis, parts.genesisFile, parts.logger), null);
  return { parts, chain, intake };
}

describe('BlockIntake', () => {
  it("takes blocks from peers and DA racing for the same heights, each once, and to the aggregator's state", async () => {
    const source = await aggregatorBlocks(4);
    const { parts, chain, intake } = await fullNode();
    const p2p = intake.from('p2p');
    const da = intake.from('da');
    const applied: bigint[] = [];
    chain.onBlock((block) => applied.push(block.header!.header!.height));
    // Both sources hand every block at once: the intake takes them one at a time, in call order.
    await Promise.all(source.blocks.flatMap((block, i) => [p2p.apply(block), da.apply(block, { header: 100n + BigInt(i), data: 100n + BigInt(i) })]));
    expect(applied).toEqual([1n, 2n, 3n, 4n]);
    expect(chain.height).toBe(4n);
    expect(hex(chain.currentState.appHash)).toBe(hex(source.chain.currentState.appHash));
    expect(hex(chain.lastDataHash)).toBe(hex(source.chain.lastDataHash));
    // The block a peer gave first learnt its DA heights from DA's copy.
    expect((await parts.store.getBlock(3n))?.headerDaHeight).toBe(102n);
    expect(parts.store.daIncludedHeight()).toBe(4n);
  });

  it('refuses a different block at a height the chain holds, and a block past the next height', async () => {
    const source = await aggregatorBlocks(3);
    const other = await aggregatorBlocks(0);
    const forged = await other.chain.produce([enc('other=1')], T0 + 1n, signer);
    const { chain, intake } = await fullNode();
    const p2p = intake.from('p2p');
    await p2p.apply(source.blocks[0]!);
    await expect(p2p.apply(forged)).rejects.toThrow(new InvalidBlockError(1n, 'conflicts with block 1 already in the chain (a different header hash)'));
    await expect(p2p.apply(source.blocks[2]!)).rejects.toThrow(/invalid block at height 3: height 3, expected 2/);
    expect(chain.height).toBe(1n);
    // Refusals leave the intake taking the next block.
    await p2p.apply(source.blocks[1]!);
    expect(chain.height).toBe(2n);
  });
});

describe('Chain', () => {
  it('loaded again from its store, goes on from the same state', async () => {
    const parts = await coreParts(closers, { signer });
    const first = await buildChain(parts);
    for (let h = 1; h <= 3; h++) await first.produce([enc(`k${h}=v`)], T0 + BigInt(h), signer);
    const again = await buildChain(parts);
    expect(again.height).toBe(3n);
    expect(again.nextHeight).toBe(4n);
    expect(hex(again.currentState.appHash)).toBe(hex(first.currentState.appHash));
    expect(hex(again.lastDataHash)).toBe(hex(first.lastDataHash));
    // Block times strictly increase even when the clock steps back.
    const next = await again.produce([], T0, signer);
    expect(next.header!.header!.time).toBe(T0 + 4n);
  });
});
