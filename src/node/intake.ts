import type { BlockStore } from '../store/index.js';
import { InvalidBlockError, headerHash, type Block } from '../types/index.js';
import { serialized } from '../util/index.js';
import type { Chain } from './chain.js';

export interface DaHeights {
  header: bigint;
  data: bigint;
}

/**
 * The one way blocks from outside (peers' gossip and catch-up, DA) enter the
 * chain: one at a time in call order, since sources race for the same height.
 * A block for a height the chain already holds is checked against the stored
 * one: the same block only adds its DA heights (a full node that got it from a
 * peer learns where DA holds it); a different one is refused.
 */
export class BlockIntake {
  constructor(
    private readonly chain: Chain,
    private readonly store: BlockStore,
  ) {}

  get nextHeight(): bigint {
    return this.chain.nextHeight;
  }

  readonly apply = serialized(async (block: Block, daHeights?: DaHeights): Promise<void> => {
    const header = block.header?.header;
    if (!header || header.height >= this.chain.nextHeight) return this.chain.apply(block, daHeights);
    const held = await this.store.getHeightByHash(headerHash(header));
    if (held !== header.height) {
      throw new InvalidBlockError(header.height, `conflicts with block ${header.height} already in the chain (a different header hash)`);
    }
    if (daHeights) await this.store.setDaHeights(header.height, daHeights.header, daHeights.data);
  });
}
