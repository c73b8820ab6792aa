import type { Logger } from '../../log/index.js';
import { Bucket, decodeStoredBlock, heightKey, type BlockStore } from '../../store/index.js';
import { RemoteSession } from '../remote-session.js';
import { TxRejectedError, type ExecResult, type Executor } from '../executor.js';
import { filterBySize, type FilterStatus } from '../filter.js';
import { isEthereumTx } from './tx-shape.js';
import { EngineError, EngineRpcError, EngineUnreachableError, type EngineClient } from './engine.js';

type Hex = `0x${string}`;

/** engine_getPayloadV3's executionPayload (Cancun). */
interface ExecutionPayload {
  parentHash: Hex;
  feeRecipient: Hex;
  stateRoot: Hex;
  receiptsRoot: Hex;
  logsBloom: Hex;
  prevRandao: Hex;
  blockNumber: Hex;
  gasLimit: Hex;
  gasUsed: Hex;
  timestamp: Hex;
  extraData: Hex;
  baseFeePerGas: Hex;
  blockHash: Hex;
  transactions: Hex[];
  withdrawals: unknown[];
  blobGasUsed: Hex;
  excessBlobGas: Hex;
}

interface PayloadStatus {
  status: 'VALID' | 'INVALID' | 'SYNCING' | 'ACCEPTED' | 'INVALID_BLOCK_HASH';
  latestValidHash: Hex | null;
  validationError: string | null;
}

/** What the executor keeps of an EL block. */
interface ElBlock {
  hash: Hex;
  number: bigint;
  stateRoot: Hex;
  timestamp: bigint;
  gasLimit: Hex;
}

/** The execution layer and the node disagree about the chain; only an operator can settle it. */
export class ExecutionSyncError extends Error {
  readonly code = 'EXECUTION_OUT_OF_SYNC';
}

/** A full node cannot replay blocks on an execution client without the rollup payload-attribute extension. */
export class ExtensionUnsupportedError extends Error {
  readonly code = 'ENGINE_EXTENSION_UNSUPPORTED';
}

/** The execution client judged a block INVALID. */
export class InvalidPayloadError extends Error {
  readonly code = 'ENGINE_PAYLOAD_INVALID';
}

export interface EvmExecutorOptions {
  engine: EngineClient;
  store: BlockStore;
  /** execution.fee_recipient: every node of a chain must use the aggregator's, or their state roots differ. */
  feeRecipient: string;
  /** Genesis initial_height: the rollup block at this height is EL block 1. */
  initialHeight: bigint;
  logger: Logger;
  retryBaseMs?: number;
  retryMaxMs?: number;
}

const ZERO_HASH: Hex = `0x${'00'.repeat(32)}`;
const toHex = (b: Uint8Array): Hex => `0x${Buffer.from(b).toString('hex')}`;
const fromHex = (h: string): Uint8Array => new Uint8Array(Buffer.from(h.slice(2), 'hex'));
const quantity = (n: bigint): Hex => `0x${n.toString(16)}`;

function elBlockOf(b: { hash: Hex; number: Hex; stateRoot: Hex; timestamp: Hex; gasLimit: Hex }): ElBlock {
  return { hash: b.hash, number: BigInt(b.number), stateRoot: b.stateRoot, timestamp: BigInt(b.timestamp), gasLimit: b.gasLimit };
}

const payloadBlock = (p: ExecutionPayload): ElBlock => elBlockOf({ ...p, hash: p.blockHash, number: p.blockNumber });

const sameTxs = (a: Uint8Array[], b: Uint8Array[]) => a === b || (a.length === b.length && a.every((tx, i) => Buffer.compare(tx, b[i]!) === 0));

const SYNC_REMEDY =
  'stop the node and the execution client, run `noded reset evm` (it empties execution.db_path and data/cache), then start the execution client and the node: the node replays its chain into it';

/**
 * The EVM execution layer over the Engine API (DESIGN.md §10). The aggregator
 * has the execution client build each block from its tx pool
 * (forkchoiceUpdated with attributes → getPayload → newPayload → forkchoiceUpdated);
 * a full node has it rebuild a block from the block's txs with the rollup
 * payload-attribute extension. Rollup height h is EL block h − initial_height + 1.
 *
 * Before its first block, and again after the execution client was unreachable
 * (it may have restarted and lost blocks), it compares heads with the node and
 * replays what the execution client lacks.
 */
export class EvmExecutor implements Executor {
  /** The EL block at the node's height. */
  private head: ElBlock | null = null;
  private genesisHash: Hex | null = null;
  private finalizedHash: Hex | null = null;
  /** EL block hashes of blocks not yet final, by rollup height, for setFinal. */
  private readonly unfinalized = new Map<bigint, Hex>();
  /** The payload getTxs had built for the next block. */
  private built: { height: bigint; txs: Uint8Array[]; payload: ExecutionPayload } | null = null;
  /** Engine calls that move forkchoice run one at a time, so a late one never moves the head back. */
  private lock: Promise<unknown> = Promise.resolve();

  /** Backoff while the client is down or syncing, and the handshake after each outage (it may have restarted behind the node). */
  private readonly session: RemoteSession;

  constructor(private readonly opts: EvmExecutorOptions) {
    this.session = new RemoteSession({
      noun: 'execution client',
      url: opts.engine.url,
      logger: opts.logger,
      retryBaseMs: opts.retryBaseMs,
      retryMaxMs: opts.retryMaxMs,
      isOutage: (err) => err instanceof EngineUnreachableError,
      isRetryable: (err) => err instanceof EngineUnreachableError || err instanceof ClientSyncing,
      syncWithNode: () => this.syncWithNode(),
    });
  }

  /** Runs the start-up handshake in the background; `onFatal` hears of a disagreement only an operator can settle. */
  start(signal: AbortSignal, onFatal: (err: Error) => void): void {
    this.session.start(signal, onFatal);
  }

  async stopped(): Promise<void> {
    await this.session.stopped();
  }

  status(): { reachable: boolean; height: bigint | null } {
    return { reachable: this.session.reachable, height: this.head?.number ?? null };
  }

  submitTx(): void {
    throw new TxRejectedError(
      `this node runs the EVM execution layer: send transactions to the execution client with eth_sendRawTransaction (execution.eth_url); blocks take them from its pool`,
      400,
    );
  }

  async initChain(): Promise<Uint8Array> {
    const genesis = await this.retrying("read the execution client's genesis block", () => this.blockByNumber(0n));
    if (!genesis) throw new EngineError(`the execution client at ${this.opts.engine.url} has no genesis block`, 'ENGINE_BAD_ANSWER');
    this.genesisHash = genesis.hash;
    this.finalizedHash = genesis.hash;
    await this.retrying('set forkchoice to genesis', () => this.forkchoice(genesis.hash));
    this.head = genesis;
    this.opts.logger.info({ hash: genesis.hash, stateRoot: genesis.stateRoot }, 'execution layer at its genesis');
    return fromHex(genesis.stateRoot);
  }

  /**
   * FilterTxs: a forced tx that does not decode as an EIP-2718 transaction is
   * removed (ev-node's EVM execution decodes each one and drops what fails);
   * gas is the execution client's to count when it builds the block, so here only bytes.
   */
  filterTxs(txs: Uint8Array[], maxBytes: number): Promise<FilterStatus[]> {
    return filterBySize(txs, maxBytes, isEthereumTx);
  }

  /** Has the execution client build the next block from its pool; the block's txs are the payload's. */
  getTxs(time?: bigint): Promise<Uint8Array[]> {
    return this.exclusive(() =>
      this.retrying(
        'build the next block',
        async () => {
          const payload = await this.buildPayload(this.head!, time ?? BigInt(Date.now()) * 1_000_000n);
          const txs = payload.transactions.map(fromHex);
          this.built = { height: this.rollupHeight(this.head!.number) + 1n, txs, payload };
          return txs;
        },
        { resync: true },
      ),
    );
  }

  executeTxs(txs: Uint8Array[], height: bigint, time: bigint, prevStateRoot: Uint8Array): Promise<ExecResult> {
    return this.exclusive(() => this.retrying(`execute block ${height}`, () => this.execute(txs, height, time, prevStateRoot), { resync: true }));
  }

  private async execute(txs: Uint8Array[], height: bigint, time: bigint, prevStateRoot: Uint8Array): Promise<ExecResult> {
    const head = this.head!;
    const expected = this.rollupHeight(head.number) + 1n;
    if (height !== expected || toHex(prevStateRoot) !== head.stateRoot) {
      throw new ExecutionSyncError(
        `execution layer out of sync: block ${height} builds on state root ${toHex(prevStateRoot)}, the execution client is at block ${head.number} with ${head.stateRoot}; ${SYNC_REMEDY}`,
      );
    }
    const built = this.built?.height === height && sameTxs(this.built.txs, txs) ? this.built.payload : null;
    const payload = built ?? (await this.buildPayload(head, time, txs));
    await this.commitPayload(payload, height);
    this.built = null;
    return {
      stateRoot: fromHex(payload.stateRoot),
      storeOps: [{ type: 'put', key: heightKey(Bucket.evmPayload, height), value: Buffer.from(JSON.stringify({ ...payload, transactions: [] })) }],
    };
  }

  /** Moves the EL's safe and finalized heads to the block DA included. */
  setFinal(height: bigint): Promise<void> {
    const hash = this.unfinalized.get(height);
    if (!hash) return Promise.resolve();
    for (const h of this.unfinalized.keys()) if (h <= height) this.unfinalized.delete(h);
    this.finalizedHash = hash;
    return this.exclusive(async () => {
      try {
        await this.forkchoice(this.head!.hash);
      } catch (err) {
        // The next block's forkchoice update carries it.
        this.opts.logger.debug({ err: (err as Error).message, height: Number(height) }, 'could not move the finalized head yet');
      }
    });
  }

  close(): Promise<void> {
    return this.opts.engine.close();
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn);
    this.lock = run.catch(() => undefined);
    return run;
  }

  private rollupHeight(elNumber: bigint): bigint {
    return elNumber === 0n ? 0n : elNumber + this.opts.initialHeight - 1n;
  }

  private elNumber(rollupHeight: bigint): bigint {
    return rollupHeight === 0n ? 0n : rollupHeight - this.opts.initialHeight + 1n;
  }

  private retrying<T>(what: string, fn: () => Promise<T>, opts: { resync?: boolean } = {}): Promise<T> {
    return this.session.retrying(what, fn, opts);
  }

  private async syncWithNode(): Promise<void> {
    const { store, logger, engine } = this.opts;
    const state = await store.getState();
    const nodeHeight = state?.lastBlockHeight ?? 0n;
    const want = this.elNumber(nodeHeight);
    const elHeight = BigInt(await engine.call<Hex>('eth_blockNumber', []));
    const outOfSync = (why: string) =>
      new ExecutionSyncError(`execution layer out of sync: node at ${nodeHeight}, execution client at ${this.rollupHeight(elHeight)} (${why}); ${SYNC_REMEDY}`);
    const genesis = await this.requireBlock(0n);
    this.genesisHash = genesis.hash;
    this.finalizedHash ??= genesis.hash;
    const nodeRoot = state ? toHex(state.appHash) : genesis.stateRoot;
    if (elHeight > want) {
      const atNode = await this.requireBlock(want);
      // One block ahead on the same chain: the node stopped after the EL took a block and before committing it.
      if (elHeight !== want + 1n || atNode.stateRoot !== nodeRoot) throw outOfSync('the execution client is ahead');
      logger.warn({ height: Number(nodeHeight) }, "execution client holds one block the node never committed; setting its head back to the node's");
      await this.forkchoice(atNode.hash);
      this.head = atNode;
      this.session.synced();
      return;
    }
    const elHead = await this.requireBlock(elHeight);
    if (elHead.stateRoot !== (elHeight === want ? nodeRoot : await this.appHashAfter(this.rollupHeight(elHeight)))) {
      throw outOfSync(`its block ${elHeight} has state root ${elHead.stateRoot}, not the node's: another chain`);
    }
    this.head = elHead;
    if (elHeight < want) await this.replay(this.rollupHeight(elHeight) + 1n, nodeHeight);
    if (this.head.stateRoot !== nodeRoot) throw outOfSync(`after replay its state root is ${this.head.stateRoot}, the node's ${nodeRoot}`);
    const included = store.daIncludedHeight();
    if (included > 0n && included <= nodeHeight) this.finalizedHash = (await this.requireBlock(this.elNumber(included))).hash;
    await this.forkchoice(this.head.hash);
    this.session.synced();
    logger.info({ height: Number(nodeHeight), hash: this.head.hash }, 'execution client in step with the node');
  }

  /** The state root after rollup block `height` (0: genesis), as the next block's header records it. */
  private async appHashAfter(height: bigint): Promise<Hex> {
    const next = await this.opts.store.getBlock(height === 0n ? this.opts.initialHeight : height + 1n);
    if (!next) throw new ExecutionSyncError(`the node's store lacks block ${height + 1n}`);
    return toHex(decodeStoredBlock(next).header!.header!.appHash);
  }

  /**
   * Re-executes stored blocks `from..to` on the EL: a block this node executed
   * before is sent whole (its stored payload with the block's txs), which any
   * execution client takes; others are rebuilt with the rollup extension.
   */
  private async replay(from: bigint, to: bigint): Promise<void> {
    const { store, logger } = this.opts;
    logger.info({ from: Number(from), to: Number(to) }, 'execution client is behind the node: replaying blocks');
    for (let height = from; height <= to; height++) {
      const stored = await store.getBlock(height);
      if (!stored) throw new ExecutionSyncError(`the node's store lacks block ${height}, which the execution client needs`);
      const block = decodeStoredBlock(stored);
      const txs = block.data!.txs;
      const kept = await store.getRaw(heightKey(Bucket.evmPayload, height));
      const head = this.head!;
      const payload: ExecutionPayload = kept
        ? { ...(JSON.parse(Buffer.from(kept).toString('utf8')) as ExecutionPayload), transactions: txs.map(toHex) }
        : await this.buildPayload(head, block.header!.header!.time, txs);
      await this.commitPayload(payload, height);
    }
  }

  /** EL timestamps are seconds and must rise block by block, so fast rollup blocks run ahead of the clock. */
  private timestampFor(parent: ElBlock, timeNanos: bigint): bigint {
    const seconds = timeNanos / 1_000_000_000n;
    return seconds > parent.timestamp ? seconds : parent.timestamp + 1n;
  }

  /**
   * forkchoiceUpdated with payload attributes on `parent`, then getPayload. With
   * `txs` (a full node or a replay), the rollup extension makes the EL build
   * exactly those txs and nothing from its pool.
   */
  private async buildPayload(parent: ElBlock, timeNanos: bigint, txs?: Uint8Array[]): Promise<ExecutionPayload> {
    const attributes = {
      timestamp: quantity(this.timestampFor(parent, timeNanos)),
      prevRandao: ZERO_HASH,
      suggestedFeeRecipient: this.opts.feeRecipient,
      withdrawals: [],
      parentBeaconBlockRoot: ZERO_HASH,
      ...(txs ? { transactions: txs.map(toHex), noTxPool: true, gasLimit: parent.gasLimit } : {}),
    };
    let payloadId: Hex | null;
    try {
      payloadId = (await this.forkchoice(parent.hash, attributes)).payloadId;
    } catch (err) {
      if (txs && err instanceof EngineRpcError) {
        throw new ExtensionUnsupportedError(
          `the execution client at ${this.opts.engine.url} refused the rollup payload-attribute extension (transactions, noTxPool, gasLimit) that a full node needs to execute blocks it did not build: ${err.rpcMessage}. Run an execution client that implements it, one of the reth/op-geth family (op-reth, op-geth, ev-reth)`,
        );
      }
      throw err;
    }
    if (!payloadId)
      throw new EngineError(`the execution client at ${this.opts.engine.url} did not start building a block on ${parent.hash}`, 'ENGINE_BAD_ANSWER');
    const { executionPayload } = await this.opts.engine.call<{ executionPayload: ExecutionPayload }>('engine_getPayloadV3', [payloadId]);
    if (txs && executionPayload.transactions.length !== txs.length) {
      throw new ExtensionUnsupportedError(
        `the execution client at ${this.opts.engine.url} built ${executionPayload.transactions.length} txs where the block has ${txs.length}: it ignores the rollup payload-attribute extension. Run an execution client that implements it, one of the reth/op-geth family (op-reth, op-geth, ev-reth)`,
      );
    }
    return executionPayload;
  }

  /** newPayload, then forkchoice to it; the payload becomes the head. */
  private async commitPayload(payload: ExecutionPayload, height: bigint): Promise<void> {
    const status = settled(
      await this.opts.engine.call<PayloadStatus>('engine_newPayloadV3', [payload, [], ZERO_HASH]),
      `engine_newPayloadV3 for block ${height}`,
    );
    if (status.status !== 'VALID') throw invalid(status, height);
    await this.forkchoice(payload.blockHash);
    this.head = payloadBlock(payload);
    this.unfinalized.set(height, payload.blockHash);
  }

  private async forkchoice(head: Hex, attributes?: object): Promise<{ payloadId: Hex | null }> {
    const finalized = this.finalizedHash ?? this.genesisHash ?? head;
    const answer = await this.opts.engine.call<{ payloadStatus: PayloadStatus; payloadId: Hex | null }>('engine_forkchoiceUpdatedV3', [
      { headBlockHash: head, safeBlockHash: finalized, finalizedBlockHash: finalized },
      attributes ?? null,
    ]);
    const status = settled(answer.payloadStatus, 'engine_forkchoiceUpdatedV3');
    if (status.status !== 'VALID') throw invalid(status);
    return answer;
  }

  private async blockByNumber(n: bigint): Promise<ElBlock | null> {
    const block = await this.opts.engine.call<Parameters<typeof elBlockOf>[0] | null>('eth_getBlockByNumber', [quantity(n), false]);
    return block ? elBlockOf(block) : null;
  }

  private async requireBlock(n: bigint): Promise<ElBlock> {
    const block = await this.blockByNumber(n);
    if (!block) throw new ExecutionSyncError(`the execution client at ${this.opts.engine.url} has no block ${n}`);
    return block;
  }
}

/** SYNCING or ACCEPTED: the EL is busy; asked again with backoff. */
class ClientSyncing extends Error {}

function settled(status: PayloadStatus, what: string): PayloadStatus {
  if (status.status === 'SYNCING' || status.status === 'ACCEPTED') throw new ClientSyncing(`${what} answered ${status.status}`);
  return status;
}

function invalid(status: PayloadStatus, height?: bigint): InvalidPayloadError {
  const which = height === undefined ? 'the forkchoice update' : `block ${height}`;
  return new InvalidPayloadError(
    `the execution client judged ${which} ${status.status}: ${status.validationError ?? 'no reason given'} (latest valid hash ${status.latestValidHash ?? 'none'})`,
  );
}
