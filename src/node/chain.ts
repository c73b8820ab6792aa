import { create } from '@bufbuild/protobuf';
import type { Logger } from '../log/index.js';
import type { Executor } from '../exec/index.js';
import type { BlockStore, StoreOp } from '../store/index.js';
import {
  BLOCK_VERSION,
  StateSchema,
  VersionSchema,
  buildEncodedBlock,
  encodeBlockAndData,
  encodedDataHash,
  headerHash,
  nanosOfTimestamp,
  splitEncodedBlock,
  timestampFromNanos,
  txId,
  validateBlock,
  InvalidBlockError,
  type Block,
  type BlockSigner,
  type EncodedBlock,
  type State,
  type TxId,
} from '../types/index.js';
import type { Genesis } from '../home/index.js';
import type { Clock } from '../util/index.js';

/** Told of each committed block: its header hash and its txs' ids (TxId), in order. */
export type BlockListener = (block: Block, hash: Uint8Array, txIds: TxId[]) => void;

/** The ids of a block's txs, in order: the mempool's for the txs it handed out (Mempool.txIds), else their sha256. */
export type TxIdSource = (txs: Uint8Array[]) => TxId[];

/** A block this node produced, as the check before its commit sees it. */
export interface ProducedBlock {
  height: bigint;
  hash: Uint8Array;
  parentHash: Uint8Array;
  /** The block's protobuf bytes, as stored. */
  bytes: Uint8Array;
}

/** A block built, executed and signed, and its commit under way. */
export interface BuiltBlock {
  block: Block;
  /** Resolves once the block is committed and the chain's listeners told; rejects when its commit (or one before it) failed. */
  committed: Promise<void>;
}

/** What the next block builds on: the last block built, committed or not. */
interface Tip {
  state: State;
  dataHash: Uint8Array;
  /** Settles once that block is committed (at once for the committed chain). */
  committed: Promise<void>;
  /** Settles once the block below it is committed. */
  parentCommitted: Promise<void>;
}

/**
 * The chain as this node holds it: the state after the last committed block,
 * and the one way new blocks get in (built here, executed, committed atomically).
 *
 * Pipelined (an executor that says it can, Executor.pipelined): block N+1 is
 * built and executed while block N's batch is written, and its batch goes in
 * once N's is written. Everything the node tells (height, state, listeners:
 * gossip, DA submission, wait=commit answers) is of committed blocks only; a
 * block built but not committed is `tip` alone. At most one block is
 * uncommitted below the one being built, so a kill -9 loses at most the blocks
 * never committed, which nobody was told of.
 */
export class Chain {
  private listeners: BlockListener[] = [];
  /** The clock's ms at the last commit, for readiness. */
  lastCommitAt = 0;
  /**
   * A check each block this node PRODUCES must pass before it is executed and
   * committed (an HA leader's fence, src/ha): when it throws, the block is
   * dropped and the error goes to the producer. Blocks applied from peers or DA skip it.
   */
  beforeCommit: ((block: ProducedBlock) => Promise<void>) | null = null;
  /**
   * Writes a block this node builds also carries in its batch, from its height
   * and bytes (the DA submitter's blob signatures, made on libuv's thread pool
   * while the block's batch waits for the one before): the batch is written once they are ready.
   */
  producedBlockOps: ((height: bigint, blockBytes: Uint8Array) => Promise<StoreOp[]>) | null = null;
  private tip: Tip;

  private constructor(
    private state: State,
    /**
     * The last block's data hash, the next block's `last_data_hash`. ev-node's
     * State does not keep it (proto/evnode/v1/state.proto); like its executor
     * (block/internal/executing/executor.go) the chain reads it from the last
     * stored block at load and keeps it in memory.
     */
    private lastBlockDataHash: Uint8Array,
    private readonly store: BlockStore,
    private readonly executor: Executor,
    private readonly genesis: Genesis,
    private readonly clock: Clock,
    private readonly txIds: TxIdSource,
  ) {
    this.tip = { state, dataHash: lastBlockDataHash, committed: Promise.resolve(), parentCommitted: Promise.resolve() };
  }

  /** Loads the committed state, or runs the executor's genesis on an empty store. */
  static async load(
    store: BlockStore,
    executor: Executor,
    genesis: Genesis,
    logger: Logger,
    clock: Clock,
    txIds: TxIdSource = (txs) => txs.map(txId),
  ): Promise<Chain> {
    let state = await store.getState();
    if (!state) {
      const appHash = await executor.initChain(genesis.startTime, genesis.initialHeight, genesis.chainId);
      state = create(StateSchema, {
        version: create(VersionSchema, { block: BLOCK_VERSION, app: 0n }),
        chainId: genesis.chainId,
        initialHeight: genesis.initialHeight,
        lastBlockHeight: 0n,
        lastBlockTime: timestampFromNanos(genesis.startTime),
        daHeight: genesis.daStartHeight,
        appHash,
        nextProposerAddress: genesis.proposerAddress,
      });
      logger.info({ chainId: genesis.chainId, appHash: Buffer.from(appHash).toString('hex') }, 'initialised chain from genesis');
    } else if (state.chainId !== genesis.chainId) {
      throw new Error(`the store holds chain ${state.chainId} but genesis says ${genesis.chainId}; reset the data directory or use the right home`);
    }
    const last = state.lastBlockHeight > 0n ? await store.getBlock(state.lastBlockHeight) : null;
    const lastDataHash = last ? encodedDataHash(splitEncodedBlock(last.bytes).data) : new Uint8Array(0);
    return new Chain(state, lastDataHash, store, executor, genesis, clock, txIds);
  }

  /** The last block's data hash: the next block's `last_data_hash` (empty before the first block). */
  get lastDataHash(): Uint8Array {
    return this.lastBlockDataHash;
  }

  /** Unix nanoseconds of the last block (genesis start time before the first). */
  get lastBlockTime(): bigint {
    return nanosOfTimestamp(this.state.lastBlockTime);
  }

  get height(): bigint {
    return this.state.lastBlockHeight;
  }

  get currentState(): State {
    return this.state;
  }

  onBlock(listener: BlockListener): () => void {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  /** The height the next block must have. */
  get nextHeight(): bigint {
    return this.state.lastBlockHeight === 0n ? this.genesis.initialHeight : this.state.lastBlockHeight + 1n;
  }

  /**
   * Builds, executes, signs and commits the next block with `txs`; `ops` join
   * its atomic batch (the forced-inclusion checkpoint). A based node's
   * `signer` is the genesis proposer's address alone: the block goes unsigned.
   */
  async produce(txs: Uint8Array[], timeNanos: bigint, signer: BlockSigner, ops: StoreOp[] = []): Promise<Block> {
    const { block, committed } = await this.build(txs, timeNanos, signer, ops);
    await committed;
    return block;
  }

  /**
   * produce(), but resolves once the block is built and executed, its commit
   * under way: the caller builds the next one meanwhile. A pipelined executor
   * builds on the block before once that one's batch is in (its own batch may
   * still be going); any other waits for its commit.
   */
  async build(txs: Uint8Array[], timeNanos: bigint, signer: BlockSigner, ops: StoreOp[] = []): Promise<BuiltBlock> {
    await (this.executor.pipelined ? this.tip.parentCommitted : this.tip.committed);
    const prev = this.tip.state;
    // Block times strictly increase even if the wall clock steps back.
    const lastTime = nanosOfTimestamp(prev.lastBlockTime);
    const time = timeNanos > lastTime ? timeNanos : lastTime + 1n;
    const height = prev.lastBlockHeight === 0n ? this.genesis.initialHeight : prev.lastBlockHeight + 1n;
    const build = () =>
      buildEncodedBlock({
        chainId: prev.chainId,
        height,
        time,
        txs,
        lastHeaderHash: prev.lastHeaderHash,
        lastDataHash: this.tip.dataHash,
        appHash: prev.appHash,
        signer,
      });
    return this.execute(txs, height, time, build, undefined, ops, this.beforeCommit, this.producedBlockOps);
  }

  /**
   * Validates a block received from DA or a peer against the chain (signature,
   * proposer, height, links, data hash, state root), executes and commits it,
   * with its DA heights when known. Throws InvalidBlockError saying which check failed.
   */
  async apply(block: Block, daHeights?: { header: bigint; data: bigint }): Promise<void> {
    await this.tip.committed;
    const prev = this.state;
    validateBlock(block, {
      chainId: prev.chainId,
      height: this.nextHeight,
      proposerAddress: this.genesis.proposerAddress,
      lastHeaderHash: prev.lastHeaderHash,
    });
    const header = block.header!.header!;
    const metadata = block.data!.metadata;
    if (metadata && (metadata.height !== header.height || metadata.chainId !== header.chainId)) {
      throw new InvalidBlockError(header.height, 'data metadata does not match the header (height or chain id)');
    }
    if (Buffer.compare(header.appHash, prev.appHash) !== 0) {
      throw new InvalidBlockError(
        header.height,
        `app_hash ${Buffer.from(header.appHash).toString('hex')} is not this node's state root ${Buffer.from(prev.appHash).toString('hex')}: execution layer out of sync`,
      );
    }
    await (
      await this.execute(block.data!.txs, header.height, header.time, () => encodeBlockAndData(block), daHeights)
    ).committed;
  }

  /**
   * Executes a block's txs on the tip, then starts the commit of the block
   * `encode` builds and encodes: it runs while the executor waits on its store
   * reads (the block's app_hash is the state root before the txs, so it does
   * not wait for them). The commit's batch goes in once the tip's is written.
   */
  private async execute(
    txs: Uint8Array[],
    height: bigint,
    time: bigint,
    encode: () => EncodedBlock,
    daHeights?: { header: bigint; data: bigint },
    extraOps: StoreOp[] = [],
    beforeCommit: Chain['beforeCommit'] = null,
    producedBlockOps: Chain['producedBlockOps'] = null,
  ): Promise<BuiltBlock> {
    const prev = this.tip.state;
    const encoding = (async () => encode())();
    // A produced block passes its check (the HA fence) before it runs: a refused one leaves the execution layer untouched.
    if (beforeCommit) {
      const { block, bytes } = await encoding;
      const header = block.header!.header!;
      await beforeCommit({ height: header.height, hash: headerHash(header), parentHash: header.lastHeaderHash, bytes });
    }
    const [result, encoded] = await Promise.all([this.executor.executeTxs(txs, height, time, prev.appHash), encoding]);
    const { block } = encoded;
    const header = block.header!.header!;
    const hash = headerHash(header);
    const next = create(StateSchema, {
      ...prev,
      lastBlockHeight: header.height,
      lastBlockTime: timestampFromNanos(header.time),
      appHash: result.stateRoot,
      lastHeaderHash: hash,
    });
    const ops = [...(result.storeOps ?? []), ...extraOps];
    if (daHeights) ops.push(this.store.daHeightsOp(header.height, daHeights.header, daHeights.data));
    const producedOps = producedBlockOps?.(header.height, encoded.bytes);
    // The commit reads them once the block before is written; a commit that fails before then never does.
    producedOps?.catch(() => undefined);
    const dataHash = encodedDataHash(encoded.data);
    const below = this.tip.committed;
    const ids = this.txIds(txs);
    const committed = this.store.commitBlock(block, hash, next, ops, encoded.bytes, below, ids, producedOps).then(() => {
      this.state = next;
      this.lastBlockDataHash = dataHash;
      this.lastCommitAt = this.clock.now();
      for (const l of this.listeners) l(block, hash, ids);
    });
    // Whoever built the block hears of a failure; the next block's build (which waits on this) too.
    committed.catch(() => undefined);
    this.tip = { state: next, dataHash, committed, parentCommitted: below };
    return { block, committed };
  }
}
