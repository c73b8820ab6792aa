import { serialized } from '../util/index.js';
import type { Block } from '../types/index.js';

/**
 * Where blocks from peers go: the node's chain (Chain satisfies this), which
 * validates (signature, proposer, height, links, data hash, state root) and
 * commits, throwing InvalidBlockError for a bad block.
 */
export interface BlockSink {
  /** The height the next block must have. */
  readonly nextHeight: bigint;
  apply(block: Block): Promise<void>;
}

/**
 * Wraps a sink so that applies run one at a time, in call order — gossip and
 * catch-up (and, if the node passes the same wrapper to it, DA sync) may race
 * for the same height. A caller that loses the race gets the chain's
 * InvalidBlockError for the height it expected; p2p treats that as stale, not
 * as the peer's fault, by re-reading `nextHeight`.
 */
export function serialSink(sink: BlockSink): BlockSink {
  return {
    get nextHeight() {
      return sink.nextHeight;
    },
    apply: serialized((block: Block) => sink.apply(block)),
  };
}

export const blockHeight = (block: Block): bigint => block.header?.header?.height ?? 0n;
