import { buildBlock, type Block, type Ed25519Key } from '../../src/types/index.js';

/** A signed block at `height` of chain `c` with `txs` (one kv tx by default) and zeroed links: for tests that store or serve any block. */
export function sampleBlock(height: bigint, signer: Ed25519Key, txs: Uint8Array[] = [new TextEncoder().encode(`k${height}=v`)]): Block {
  return buildBlock({
    chainId: 'c',
    height,
    time: height,
    txs,
    lastHeaderHash: new Uint8Array(32),
    lastDataHash: new Uint8Array(32),
    appHash: new Uint8Array(32),
    signer,
  });
}
