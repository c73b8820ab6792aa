import { buildBlock, type Block, type Ed25519Key } from '../../src/types/index.js';

/** A signed block at `height` of chain `c` with one kv tx and zeroed links: for tests that store or serve any block. */
export function sampleBlock(height: bigint, signer: Ed25519Key): Block {
  return buildBlock({
    chainId: 'c',
    height,
    time: height,
    txs: [new TextEncoder().encode(`k${height}=v`)],
    lastHeaderHash: new Uint8Array(32),
    lastDataHash: new Uint8Array(32),
    appHash: new Uint8Array(32),
    signer,
  });
}
