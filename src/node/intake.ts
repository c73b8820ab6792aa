import type { BlockOrigin, NodeMetrics } from '../metrics/index.js';
import type { BlockStore } from '../store/index.js';
import { InvalidBlockError, headerHash, type Block } from '../types/index.js';
import { serialized } from '../util/index.js';
import type { Chain } from './chain.js';
import type { GenesisGuard } from './genesis-guard.js';
import type { ForcedInclusionVerifier } from '../forced/index.js';

export interface DaHeights {
  header: bigint;
  data: bigint;
}

/** Where one source (peers, DA) hands its blocks. */
export interface IntakeSink {
  readonly nextHeight: bigint;
  /** The chain's last data hash: the last_data_hash of a next block whose empty data came from no blob. */
  readonly lastDataHash: Uint8Array;
  apply(block: Block, daHeights?: DaHeights): Promise<void>;
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
    private readonly metrics: NodeMetrics | null,
    /** Catches blocks of another genesis (catch-up from peers serves them unchecked) before the chain rejects them one by one. */
    private readonly guard: GenesisGuard,
    /** A full node's forced-inclusion check of each block DA holds; null when forced inclusion is off. */
    private readonly verifier: ForcedInclusionVerifier | null = null,
  ) {}

  /** The intake as one source feeds it: the blocks it applies count toward that source in the metrics. */
  from(origin: BlockOrigin): IntakeSink {
    const labels = { source: origin };
    const chain = this.chain;
    return {
      get nextHeight() {
        return chain.nextHeight;
      },
      get lastDataHash() {
        return chain.lastDataHash;
      },
      apply: async (block, daHeights) => {
        if (block.header) this.guard.check(block.header, origin);
        if (await this.apply(block, daHeights)) this.metrics?.blocksApplied.inc(labels);
      },
    };
  }

  /** Resolves true when the block went into the chain, false when the chain already held it. */
  readonly apply = serialized(async (block: Block, daHeights?: DaHeights): Promise<boolean> => {
    const header = block.header?.header;
    if (!header || header.height >= this.chain.nextHeight) {
      if (this.verifier && header && (daHeights || this.verifier.violation))
        await this.verifier.check(daHeights?.header ?? 0n, header.height, block.data?.txs ?? []);
      await this.chain.apply(block, daHeights);
      return true;
    }
    const held = await this.store.getHeightByHash(headerHash(header));
    if (held !== header.height) {
      throw new InvalidBlockError(header.height, `conflicts with block ${header.height} already in the chain (a different header hash)`);
    }
    if (daHeights) {
      // A block from a peer, now seen on DA: the chain up to it is checked at that DA height (it is applied already).
      // Its txs count toward the DA height's bytes (the grace period's fullness rule); they are in the tx index already.
      if (this.verifier && !this.verifier.violation) await this.verifier.check(daHeights.header, header.height, block.data?.txs ?? []);
      await this.store.setDaHeights(header.height, daHeights.header, daHeights.data);
    }
    return false;
  });
}
