import { CheckTxType, ResponseFinalizeBlock } from 'cosmjs-types/tendermint/abci/types';
import type { Genesis } from '../../home/index.js';
import type { Logger } from '../../log/index.js';
import { Bucket, decodeStoredBlock, heightKey, type BlockStore, type StoreOp } from '../../store/index.js';
import { isAbortError, onAbort, serialized, toHex } from '../../util/index.js';
import { CheckTxRejectedError, TxRejectedError, type BlockResults, type ExecResult, type Executor } from '../executor.js';
import { filterBySize, type FilterStatus } from '../filter.js';
import { MAX_BLOCK_TXS, MAX_BLOCK_TX_BYTES } from '../kv/kv.js';
import type { Mempool } from '../mempool.js';
import type { AbciClient } from './client.js';
import { AbciUnavailableError } from './connection.js';
import { timestampOf, type ResponseOf } from './messages.js';

/** The app's state is not the node's: the node cannot go on until one of them is put right. */
export class OutOfSyncError extends Error {
  constructor(nodeHeight: bigint, appHeight: bigint, detail: string) {
    super(
      `execution layer out of sync: node at ${nodeHeight}, app at ${appHeight}: ${detail}. ` +
        `Stop the node and the app, delete the app's data (the node replays its stored blocks into the app at the next start); ` +
        `or, if the node's data is what is wrong, run \`noded reset soft\` and let it sync again`,
    );
    this.name = 'OutOfSyncError';
  }
}

export interface AbciExecutorOptions {
  client: AbciClient;
  store: BlockStore;
  mempool: Mempool;
  genesis: Genesis;
  /** Largest total of tx bytes one block takes (a block must fit one DA blob). */
  maxBlockTxBytes: number;
  logger: Logger;
}

/** The app's FinalizeBlock response, written in the block's batch: CometBFT keeps it for block_results too (state/store.go, SaveFinalizeBlockResponse). */
function finalizeBlockResponseOp(height: bigint, response: ResponseFinalizeBlock): StoreOp {
  return { type: 'put', key: heightKey(Bucket.finalizeBlockResponse, height), value: ResponseFinalizeBlock.encode(response).finish() };
}

const hashesEqual = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b) === 0;

/**
 * Drives an ABCI 2.0 app (DESIGN.md §10). A block is FinalizeBlock, whose
 * app_hash is the block's state root, then — once the node has committed the
 * block — Commit. In that order a crash of either side leaves the app at or
 * one block behind the node, never ahead, and the Info handshake replays
 * what it missed from the node's store: at start, and whenever the consensus
 * connection was lost.
 */
export class AbciExecutor implements Executor {
  private signal: AbortSignal | null = null;
  private startup: Promise<void> = Promise.resolve();
  /** InitChain's app hash: the node's state root while it has no blocks. */
  private genesisAppHash: Uint8Array = new Uint8Array(0);
  /** The app's last committed height as last heard (Info, Commit); null before the first answer. */
  private appHeight: bigint | null = null;
  /** The consensus socket on which the app is known to be in step with the node; any other needs a handshake first. */
  private syncedGeneration = -1;
  /** The consensus socket InitChain was last sent on (an app still at height 0 on it needs none again). */
  private initChainGeneration = -1;
  /** The Commit of the last block, sent once the node committed it; the next block waits for it. */
  private committing: Promise<void> = Promise.resolve();
  /** Consensus work runs one piece at a time: blocks, commits and handshakes. */
  private readonly exclusive = serialized((work: () => Promise<unknown>) => work());

  constructor(private readonly opts: AbciExecutorOptions) {}

  private get consensus() {
    return this.opts.client.consensus;
  }

  /**
   * The Info handshake at start, beside the node's other loops (blocks wait
   * for it); `onFatal` hears when the app is out of sync. The node's signal
   * ends any wait for the app.
   */
  start(signal: AbortSignal, onFatal: (err: Error) => void): void {
    this.signal = signal;
    onAbort(signal, () => this.opts.client.close());
    this.startup = this.run(async () => {
      const state = await this.opts.store.getState();
      await this.bringAppTo(state?.lastBlockHeight ?? 0n, state?.appHash ?? this.genesisAppHash);
    }).catch((err) => {
      if (!isAbortError(err, signal)) onFatal(err as Error);
    });
  }

  async stopped(): Promise<void> {
    await this.startup;
  }

  /** Whether the consensus connection is up, and the app's height when last heard. */
  status(): { reachable: boolean; height: bigint | null } {
    return { reachable: this.consensus.connected, height: this.appHeight };
  }

  async close(): Promise<void> {
    this.opts.client.close();
  }

  async initChain(genesisTime: bigint, initialHeight: bigint, chainId: string): Promise<Uint8Array> {
    return this.run(async () => {
      const info = await this.opts.client.info(this.consensus, { waitForApp: true });
      if (info.lastBlockHeight > 0n) throw new OutOfSyncError(0n, info.lastBlockHeight, 'the node has no blocks but the app has committed some');
      this.genesisAppHash = await this.sendInitChain(genesisTime, initialHeight, chainId);
      this.syncedGeneration = this.consensus.generation;
      return this.genesisAppHash;
    });
  }

  /**
   * FilterTxs through the app: CheckTx on the mempool connection, as CometBFT
   * checks a tx before a proposal takes it; a non-zero code removes it.
   */
  filterTxs(txs: Uint8Array[], maxBytes: number): Promise<FilterStatus[]> {
    return filterBySize(txs, maxBytes, async (tx) => (await this.opts.client.mempool.call('checkTx', { tx, type: CheckTxType.NEW })).code === 0);
  }

  async getTxs(_time?: bigint, maxBytes = Infinity): Promise<Uint8Array[]> {
    await this.opts.mempool.settled();
    return this.opts.mempool.take(MAX_BLOCK_TXS, Math.min(MAX_BLOCK_TX_BYTES, this.opts.maxBlockTxBytes, maxBytes));
  }

  async executeTxs(txs: Uint8Array[], height: bigint, time: bigint, prevStateRoot: Uint8Array): Promise<ExecResult> {
    const nodeHeight = height === this.opts.genesis.initialHeight ? 0n : height - 1n;
    return this.run(async () => {
      for (;;) {
        try {
          await this.committing;
          if (this.syncedGeneration !== this.consensus.generation) await this.bringAppTo(nodeHeight, prevStateRoot);
          const result = await this.consensus.call('finalizeBlock', this.finalizeRequest(txs, height, time), { generation: this.syncedGeneration });
          return { stateRoot: result.appHash, storeOps: [finalizeBlockResponseOp(height, result)] };
        } catch (err) {
          if (!(err instanceof AbciUnavailableError) || this.signal?.aborted) throw err;
          this.opts.logger.warn(
            { height: Number(height), reason: err.message },
            `lost the ABCI app at block ${height}; waiting for it, then replaying what it missed`,
          );
          this.committing = Promise.resolve();
          this.syncedGeneration = -1;
        }
      }
    });
  }

  /** Sends Commit for the block the node just committed. */
  blockCommitted(height: bigint): void {
    const generation = this.syncedGeneration;
    this.committing = this.consensus.call('commit', {}, { generation }).then(
      () => {
        this.appHeight = height;
      },
      (err) => {
        // Lost with the app: the handshake before the next block finds where it stopped.
        if (!(err instanceof AbciUnavailableError)) throw err;
      },
    );
    // A failure surfaces in the next block; until then it is not unhandled.
    this.committing.catch(() => undefined);
  }

  async setFinal(): Promise<void> {}

  /** The app's FinalizeBlock response for the block, kept with it (null for a block committed before the node kept them). */
  async blockResults(height: bigint): Promise<BlockResults | null> {
    const bytes = await this.opts.store.getRaw(heightKey(Bucket.finalizeBlockResponse, height));
    return bytes ? ResponseFinalizeBlock.decode(bytes) : null;
  }

  /** The app's Info, for /abci_info. */
  info(): Promise<ResponseOf<'info'>> {
    return this.opts.client.info();
  }

  /** A Query on the query connection, for /abci_query. */
  query(request: { path: string; data: Uint8Array; height: bigint; prove: boolean }): Promise<ResponseOf<'query'>> {
    return this.opts.client.query.call('query', request);
  }

  /** CheckTx on the mempool connection; an accepted tx waits in the mempool for a block. Resolves with the app's answer. */
  async submitTx(tx: Uint8Array): Promise<ResponseOf<'checkTx'>> {
    let response: ResponseOf<'checkTx'>;
    try {
      response = await this.opts.client.mempool.call('checkTx', { tx, type: CheckTxType.NEW });
    } catch (err) {
      throw new TxRejectedError(`the ABCI app could not check the tx: ${(err as Error).message}`, 503);
    }
    if (response.code !== 0) throw new CheckTxRejectedError(response);
    await this.opts.mempool.add(tx);
    return response;
  }

  /** Runs consensus work alone; while the node shuts down, ends with the signal's reason (a clean stop, not a failure). */
  private async run<T>(work: () => Promise<T>): Promise<T> {
    try {
      return (await this.exclusive(work)) as T;
    } catch (err) {
      if (this.signal?.aborted) throw this.signal.reason;
      throw err;
    }
  }

  private finalizeRequest(txs: Uint8Array[], height: bigint, time: bigint) {
    return { txs, height, time: timestampOf(time), proposerAddress: this.opts.genesis.proposerAddress };
  }

  private async sendInitChain(genesisTime: bigint, initialHeight: bigint, chainId: string): Promise<Uint8Array> {
    const generation = this.consensus.generation;
    const response = await this.consensus.call(
      'initChain',
      { time: timestampOf(genesisTime), chainId, initialHeight, appStateBytes: this.opts.genesis.appState ?? new Uint8Array(0) },
      { generation },
    );
    this.initChainGeneration = generation;
    return response.appHash;
  }

  /** The state root after block `height` (0: genesis) as the node holds it: from the next block's header, or the node's state at its head. */
  private async stateRootAfter(height: bigint, nodeHeight: bigint, nodeAppHash: Uint8Array): Promise<Uint8Array> {
    if (height === nodeHeight) return nodeAppHash;
    const next = height === 0n ? this.opts.genesis.initialHeight : height + 1n;
    const stored = await this.opts.store.getBlock(next);
    if (!stored) throw new Error(`block ${next} is missing from the store; the node cannot replay it into the ABCI app`);
    return decodeStoredBlock(stored).header!.header!.appHash;
  }

  /**
   * The Info handshake: brings the app to the node's height `nodeHeight` (state
   * root `nodeAppHash`), replaying stored blocks it lacks; throws OutOfSyncError
   * when it is ahead or its hash differs.
   */
  private async bringAppTo(nodeHeight: bigint, nodeAppHash: Uint8Array): Promise<void> {
    const { genesis, logger } = this.opts;
    const info = await this.opts.client.info(this.consensus, { waitForApp: true });
    const generation = this.consensus.generation;
    const appHeight = info.lastBlockHeight;
    this.appHeight = appHeight;
    if (appHeight > nodeHeight) throw new OutOfSyncError(nodeHeight, appHeight, 'the app has committed blocks the node does not have');
    if (appHeight === 0n) {
      if (this.initChainGeneration !== generation) {
        const appHash = await this.sendInitChain(genesis.startTime, genesis.initialHeight, genesis.chainId);
        const expected = await this.stateRootAfter(0n, nodeHeight, nodeAppHash);
        if (!hashesEqual(appHash, expected)) {
          throw new OutOfSyncError(nodeHeight, 0n, `InitChain gave app hash ${toHex(appHash)} but the node's genesis state root is ${toHex(expected)}`);
        }
      }
    } else {
      const expected = await this.stateRootAfter(appHeight, nodeHeight, nodeAppHash);
      if (!hashesEqual(info.lastBlockAppHash, expected)) {
        throw new OutOfSyncError(
          nodeHeight,
          appHeight,
          `the app's hash at height ${appHeight} is ${toHex(info.lastBlockAppHash)} but the node's is ${toHex(expected)}`,
        );
      }
    }
    const from = appHeight === 0n ? genesis.initialHeight : appHeight + 1n;
    if (from <= nodeHeight) {
      logger.info(
        { appHeight: Number(appHeight), nodeHeight: Number(nodeHeight), blocks: Number(nodeHeight - from + 1n) },
        'replaying stored blocks into the ABCI app',
      );
    }
    for (let height = from; height <= nodeHeight; height++) {
      const block = decodeStoredBlock((await this.opts.store.getBlock(height))!);
      const header = block.header!.header!;
      const result = await this.consensus.call('finalizeBlock', this.finalizeRequest(block.data!.txs, height, header.time), { generation });
      const expected = await this.stateRootAfter(height, nodeHeight, nodeAppHash);
      if (!hashesEqual(result.appHash, expected)) {
        throw new OutOfSyncError(
          nodeHeight,
          height - 1n,
          `replaying block ${height} gave app hash ${toHex(result.appHash)} but the node's is ${toHex(expected)}`,
        );
      }
      await this.consensus.call('commit', {}, { generation });
      this.appHeight = height;
    }
    logger.info({ height: Number(nodeHeight), appHash: toHex(nodeAppHash) }, 'ABCI app in step with the node');
    this.syncedGeneration = generation;
  }
}
