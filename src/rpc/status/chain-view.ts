import { decodeStoredBlock } from '../../store/index.js';
import { headerHash } from '../../types/index.js';
import type { RpcBackend } from '../backend.js';
import type { HashedBlock } from './encoding.js';
import { internalError, type CallParams } from './jsonrpc.js';

/** One method of the status server: the names of its params in order (for positional params), and the call. */
export interface StatusMethod {
  args: readonly string[];
  call(params: CallParams): Promise<unknown>;
}

/** The node's chain as the status methods read it, with CometBFT's rules for which heights may be asked for. */
export class ChainView {
  constructor(readonly backend: RpcBackend) {}

  /** Height of the last committed block; 0 before the first. */
  latest(): bigint {
    return this.backend.state().lastBlockHeight;
  }

  /** Lowest height the store holds (CometBFT's BlockStore.Base): nothing is pruned, so the initial height once there are blocks. */
  base(): bigint {
    return this.latest() > 0n ? this.backend.state().initialHeight : 0n;
  }

  /**
   * The height a `height` param selects, checked as CometBFT's getHeight does
   * (rpc/core/env.go), with its messages: absent means `latest`.
   */
  height(params: CallParams, latest = this.latest()): bigint {
    const height = params.int('height');
    if (height === undefined) return latest;
    if (height <= 0n) throw internalError(`height must be greater than 0, but got ${height}`);
    if (height > latest) throw internalError(`height ${height} must be less than or equal to the current blockchain height ${latest}`);
    const base = this.base();
    if (height < base) throw internalError(`height ${height} is not available, lowest height is ${base}`);
    return height;
  }

  async blockAt(height: bigint): Promise<HashedBlock | null> {
    if (height <= 0n) return null;
    const stored = await this.backend.store.getBlock(height);
    if (!stored) return null;
    const block = decodeStoredBlock(stored);
    return { block, hash: headerHash(block.header!.header!) };
  }

  /** The block before `height`, whose signature is its last commit; null at the chain's first block. */
  previousOf(height: bigint): Promise<HashedBlock | null> {
    return height > this.base() ? this.blockAt(height - 1n) : Promise.resolve(null);
  }

  /** The state root after the block at `height`: the next block's app_hash, or the node's state at its head. */
  async appHashAfter(height: bigint): Promise<Uint8Array> {
    if (height >= this.latest()) return this.backend.state().appHash;
    return (await this.blockAt(height + 1n))?.block.header!.header!.appHash ?? new Uint8Array(0);
  }
}
