import { createHash } from 'node:crypto';
import { Code, ConnectError } from '@connectrpc/connect';
import type { Logger } from '../../log/index.js';
import { BlockStore, Bucket, MetadataKey, heightBytes, heightKey, readHeight, type StoreOp } from '../../store/index.js';
import { FilterStatus } from '../../types/gen/node/v1/execution_pb.js';
import { serialized, toHex } from '../../util/index.js';
import { AbciClient, AbciUnavailableError } from '../abci/index.js';
import { timestampOf } from '../abci/messages.js';
import { TxRejectedError } from '../executor.js';
import { KvExecutor, MAX_BLOCK_TXS, MAX_BLOCK_TX_BYTES } from '../kv/kv.js';
import { Mempool } from '../mempool.js';

/**
 * What `noded exec serve` drives behind the ExecutorService: ev-node's
 * core/execution Executor (InitChain, GetTxs, ExecuteTxs, SetFinal,
 * GetExecutionInfo, FilterTxs), heights and times as the node's own Executor has them.
 * Errors are ConnectErrors, whose code the node classifies (README "Execution over gRPC").
 */
export interface ServedMachine {
  initChain(genesisTime: bigint, initialHeight: bigint, chainId: string): Promise<Uint8Array>;
  getTxs(): Promise<Uint8Array[]>;
  executeTxs(txs: Uint8Array[], height: bigint, time: bigint, prevStateRoot: Uint8Array): Promise<Uint8Array>;
  setFinal(height: bigint): Promise<void>;
  /** GetExecutionInfo's max_gas: 0 for a machine that meters no gas. */
  maxGas(): bigint;
  filterTxs(txs: Uint8Array[], maxBytes: bigint, maxGas: bigint, hasForceIncluded: boolean): FilterStatus[];
  /** A tx sent to the executor itself (POST /tx), for GetTxs to hand out. */
  submitTx(tx: Uint8Array): Promise<void>;
  /** Its height, state root and chain, for its start-up log line. */
  info(): { height: bigint; stateRoot: string; chainId: string | null };
  close(): Promise<void>;
}

/** The state machine under a ledger: the kv machine, or an ABCI app. */
interface Core {
  /** Sets up genesis state; its root. */
  init(genesisTime: bigint, initialHeight: bigint, chainId: string): Promise<Uint8Array>;
  /** Where its state stands, when it knows apart from the ledger (an ABCI app's Info); an app back at height 0 is given `genesis` again. */
  position?(genesis: GenesisRecord): Promise<{ height: bigint; root: Uint8Array }>;
  root(): Uint8Array;
  /** Applies a block: its root and the writes to make with the ledger's. */
  apply(txs: Uint8Array[], height: bigint, time: bigint): Promise<{ root: Uint8Array; ops: StoreOp[] }>;
  mempool: Mempool;
  /** Refuses a tx sent to the executor (POST /tx) that it would never take, with TxRejectedError. */
  check(tx: Uint8Array): Promise<void>;
  close(): Promise<void>;
}

interface GenesisRecord {
  chainId: string;
  initialHeight: string;
  /** Unix ns. */
  time: string;
  stateRoot: string;
}

/** What identifies an ExecuteTxs request: the state it builds on and its txs. */
function requestDigest(prevStateRoot: Uint8Array, txs: Uint8Array[]): Buffer {
  const h = createHash('sha256').update(prevStateRoot);
  for (const tx of txs) h.update(heightBytes(BigInt(tx.length))).update(tx);
  return h.digest();
}

const sameBytes = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b) === 0;

const DELETE_DATA = "stop `noded exec serve` and delete its data directory (and its app's), then start it again: the node replays its blocks into it";

const MEMPOOL_LIMITS = { maxTxs: 100_000, maxTxBytes: 1024 * 1024, retryAfterSeconds: 1 };

/**
 * The executor's own mempool (txs sent to `exec serve`'s POST /tx): no
 * committed-tx index, as the executor keeps no blocks, and held in memory only,
 * as an execution client's own mempool is (the node's durable admission is the
 * node's; these txs reach it through GetTxs).
 */
const newMempool = () =>
  new Mempool(MEMPOOL_LIMITS, {
    getTxIdLocations: async (ids) => ids.map(() => null),
    keepMempoolTxs: async () => {},
    restoreMempoolTxs: async () => [],
  });

/**
 * A state machine as a remote executor, with a ledger of the blocks it
 * executed (what each request was, the root it gave) in a store of its own.
 * The ledger makes it what the node's handshake needs: ExecuteTxs of a block
 * it executed already answers the same root again (idempotent, as ev-node's
 * InitChain must be), a block beyond its next is OUT_OF_RANGE (it lacks
 * blocks: the node replays them), and a block that does not build on its
 * state is FAILED_PRECONDITION (another chain: an operator's problem). State
 * (for kv), ledger and height go to disk in one batch, so a kill -9 leaves it
 * at a block boundary.
 */
export class LedgerMachine implements ServedMachine {
  private height = 0n;
  private genesis: GenesisRecord | null = null;
  private readonly exclusive = serialized((work: () => Promise<unknown>) => work());

  private constructor(
    private readonly store: BlockStore,
    private readonly core: Core,
  ) {}

  /** The kv machine, its state and ledger in `dir`. */
  static async kv(dir: string): Promise<LedgerMachine> {
    const store = await BlockStore.open(dir, `${dir}.pid`);
    const mempool = newMempool();
    const kv = new KvExecutor(store, mempool);
    await kv.load();
    return LedgerMachine.over(store, {
      mempool,
      check: async (tx) => {
        if (tx.indexOf(0x3d) <= 0) throw new TxRejectedError('tx must be key=value with a non-empty key', 400);
      },
      init: async () => kv.stateRoot(),
      root: () => kv.stateRoot(),
      apply: async (txs, height, time) => {
        const result = await kv.executeTxs(txs, height, time, kv.stateRoot());
        return { root: result.stateRoot, ops: result.storeOps ?? [] };
      },
      close: async () => undefined,
    });
  }

  /**
   * The ABCI app at `address` (CometBFT 0.38 socket protocol), its ledger in
   * `dir`: ExecuteTxs is FinalizeBlock then Commit at once (the ledger, not the
   * app, answers a block executed before); the app's Info is where it stands,
   * so an app that lost blocks is OUT_OF_RANGE and gets them replayed. Txs it
   * is sent directly go through CheckTx.
   */
  static async abci(dir: string, address: string, logger: Logger): Promise<LedgerMachine> {
    const store = await BlockStore.open(dir, `${dir}.pid`);
    const client = new AbciClient({ address, logger });
    const mempool = newMempool();
    let root: Uint8Array = new Uint8Array(0);
    /** Whether this process sent the app InitChain (an app that lost its data needs it again). */
    let initialised = false;
    const unavailable = <T>(call: Promise<T>): Promise<T> =>
      call.catch((err: unknown) => {
        throw err instanceof AbciUnavailableError ? new ConnectError(`the ABCI app at ${address} is unreachable: ${err.message}`, Code.Unavailable) : err;
      });
    const machine = await LedgerMachine.over(store, {
      mempool,
      check: async (tx) => {
        const response = await unavailable(client.mempool.call('checkTx', { tx }));
        if (response.code !== 0) throw new TxRejectedError(`the app rejected the tx in CheckTx: ${response.log || '(no log)'} (code ${response.code})`, 400);
      },
      init: async (genesisTime, initialHeight, chainId) => {
        const info = await unavailable(client.info(client.consensus));
        if (info.lastBlockHeight > 0n)
          throw new ConnectError(
            `the ABCI app at ${address} has committed blocks already but this executor holds no genesis; ${DELETE_DATA}`,
            Code.FailedPrecondition,
          );
        root = (await unavailable(client.consensus.call('initChain', { time: timestampOf(genesisTime), chainId, initialHeight }))).appHash;
        initialised = true;
        return root;
      },
      position: async (genesis) => {
        const info = await unavailable(client.info(client.consensus));
        if (info.lastBlockHeight > 0n) root = info.lastBlockAppHash;
        else if (!initialised) {
          const request = { time: timestampOf(BigInt(genesis.time)), chainId: genesis.chainId, initialHeight: BigInt(genesis.initialHeight) };
          root = (await unavailable(client.consensus.call('initChain', request))).appHash;
          initialised = true;
        }
        return { height: info.lastBlockHeight, root };
      },
      root: () => root,
      apply: async (txs, height, time) => {
        const result = await unavailable(client.consensus.call('finalizeBlock', { txs, height, time: timestampOf(time) }));
        await unavailable(client.consensus.call('commit', {}));
        root = result.appHash;
        return { root, ops: [] };
      },
      close: async () => client.close(),
    });
    if (machine.genesis) root = Buffer.from(machine.genesis.stateRoot, 'hex');
    return machine;
  }

  private static async over(store: BlockStore, core: Core): Promise<LedgerMachine> {
    const machine = new LedgerMachine(store, core);
    const height = await store.getMetadata(MetadataKey.execHeight);
    machine.height = height ? readHeight(height) : 0n;
    const genesis = await store.getMetadata(MetadataKey.execGenesis);
    machine.genesis = genesis ? (JSON.parse(Buffer.from(genesis).toString('utf8')) as GenesisRecord) : null;
    return machine;
  }

  info(): { height: bigint; stateRoot: string; chainId: string | null } {
    return { height: this.height, stateRoot: toHex(this.core.root()), chainId: this.genesis?.chainId ?? null };
  }

  initChain(genesisTime: bigint, initialHeight: bigint, chainId: string): Promise<Uint8Array> {
    return this.run(async () => {
      if (this.genesis) {
        if (this.genesis.chainId !== chainId || this.genesis.initialHeight !== String(initialHeight)) {
          throw new ConnectError(
            `this executor holds chain ${this.genesis.chainId} (initial height ${this.genesis.initialHeight}), not ${chainId} (initial height ${initialHeight}); ${DELETE_DATA}`,
            Code.FailedPrecondition,
          );
        }
        return Buffer.from(this.genesis.stateRoot, 'hex');
      }
      const root = await this.core.init(genesisTime, initialHeight, chainId);
      this.genesis = { chainId, initialHeight: String(initialHeight), time: String(genesisTime), stateRoot: toHex(root) };
      this.height = initialHeight - 1n;
      await this.store.writeBatch([
        this.store.metadataOp(MetadataKey.execGenesis, Buffer.from(JSON.stringify(this.genesis))),
        this.store.metadataOp(MetadataKey.execHeight, heightBytes(this.height)),
      ]);
      return root;
    });
  }

  async getTxs(): Promise<Uint8Array[]> {
    await this.core.mempool.settled();
    return this.core.mempool.take(MAX_BLOCK_TXS, MAX_BLOCK_TX_BYTES);
  }

  /** The machine's check (key=value for kv, CheckTx for an ABCI app), then its mempool. */
  async submitTx(tx: Uint8Array): Promise<void> {
    await this.core.check(tx);
    await this.core.mempool.add(tx);
  }

  executeTxs(txs: Uint8Array[], height: bigint, time: bigint, prevStateRoot: Uint8Array): Promise<Uint8Array> {
    return this.run(async () => {
      if (!this.genesis) throw new ConnectError('InitChain first: this executor has no chain yet', Code.FailedPrecondition);
      const initial = BigInt(this.genesis.initialHeight);
      const at = this.core.position ? await this.core.position(this.genesis) : { height: this.height, root: this.core.root() };
      const current = at.height === 0n ? initial - 1n : at.height;
      const digest = requestDigest(prevStateRoot, txs);
      if (height <= current) {
        const kept = await this.store.getRaw(heightKey(Bucket.execLedger, height));
        if (kept && sameBytes(kept.subarray(0, 32), digest)) return kept.subarray(32);
        throw new ConnectError(
          `this executor executed another block ${height} (other txs or another state before it); ${DELETE_DATA}`,
          Code.FailedPrecondition,
        );
      }
      if (height > current + 1n) {
        throw new ConnectError(`this executor is at height ${current}; block ${height} needs block ${current + 1n} first`, Code.OutOfRange);
      }
      const root = at.height === 0n ? Buffer.from(this.genesis.stateRoot, 'hex') : at.root;
      if (!sameBytes(prevStateRoot, root)) {
        throw new ConnectError(
          `block ${height} builds on state root ${toHex(prevStateRoot)} but this executor's is ${toHex(root)}; ${DELETE_DATA}`,
          Code.FailedPrecondition,
        );
      }
      const result = await this.core.apply(txs, height, time);
      await this.store.writeBatch([
        ...result.ops,
        { type: 'put', key: heightKey(Bucket.execLedger, height), value: Buffer.concat([digest, result.root]) },
        this.store.metadataOp(MetadataKey.execHeight, heightBytes(height)),
      ]);
      this.height = height;
      this.core.mempool.blockCommitted(txs);
      return result.root;
    });
  }

  async setFinal(height: bigint): Promise<void> {
    if (height > this.height) throw new ConnectError(`block ${height} is not executed here yet (this executor is at height ${this.height})`, Code.OutOfRange);
  }

  maxGas(): bigint {
    return 0n;
  }

  /**
   * ev-node's kv testapp's FilterTxs (apps/testapp/kv/kvexecutor.go): empty txs
   * and, with force-included txs, any that is not key=value are removed; a tx
   * over maxBytes is removed, and once the bytes are used up the rest wait.
   */
  filterTxs(txs: Uint8Array[], maxBytes: bigint, _maxGas: bigint, hasForceIncluded: boolean): FilterStatus[] {
    let total = 0n;
    let full = false;
    return txs.map((tx) => {
      const size = BigInt(tx.length);
      if (tx.length === 0 || (hasForceIncluded && tx.indexOf(0x3d) <= 0)) return FilterStatus.FILTER_REMOVE;
      if (maxBytes > 0n && size > maxBytes) return FilterStatus.FILTER_REMOVE;
      if (full || (maxBytes > 0n && total + size > maxBytes)) {
        full = true;
        return FilterStatus.FILTER_POSTPONE;
      }
      total += size;
      return FilterStatus.FILTER_OK;
    });
  }

  async close(): Promise<void> {
    await this.core.close();
    await this.store.close();
  }

  private async run<T>(work: () => Promise<T>): Promise<T> {
    return (await this.exclusive(work)) as T;
  }
}
