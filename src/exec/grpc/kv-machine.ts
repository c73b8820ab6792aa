import { createHash } from 'node:crypto';
import { Code, ConnectError } from '@connectrpc/connect';
import { BlockStore, Bucket, MetadataKey, heightBytes, heightKey, readHeight } from '../../store/index.js';
import { serialized, toHex } from '../../util/index.js';
import { FilterStatus } from '../../types/gen/node/v1/execution_pb.js';
import { KvExecutor } from '../kv/kv.js';
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
  close(): Promise<void>;
}

interface GenesisRecord {
  chainId: string;
  initialHeight: string;
  stateRoot: string;
}

/** What identifies an ExecuteTxs request: the state it builds on and its txs. */
function requestDigest(prevStateRoot: Uint8Array, txs: Uint8Array[]): Buffer {
  const h = createHash('sha256').update(prevStateRoot);
  for (const tx of txs) h.update(heightBytes(BigInt(tx.length))).update(tx);
  return h.digest();
}

const sameBytes = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b) === 0;

const DELETE_DATA = 'stop `noded exec serve`, delete its --data directory and start it again: the node replays its blocks into it';

/**
 * The built-in kv machine as a remote executor: its state in a store of its
 * own, beside a ledger of the blocks it executed (what each request was, the
 * root it gave). The ledger makes it what the node's handshake needs:
 * ExecuteTxs of a block it already executed answers the same root again
 * (idempotent, as ev-node's InitChain must be), a block beyond its next is
 * OUT_OF_RANGE (it lacks blocks: the node replays them), and a block that does
 * not build on its state is FAILED_PRECONDITION (another chain: an operator's
 * problem). State, ledger and height go to disk in one batch, so a kill -9
 * leaves it at a block boundary.
 */
export class KvMachine implements ServedMachine {
  private height = 0n;
  private genesis: GenesisRecord | null = null;
  private readonly exclusive = serialized((work: () => Promise<unknown>) => work());

  private constructor(
    private readonly store: BlockStore,
    private readonly kv: KvExecutor,
    private readonly mempool: Mempool,
  ) {}

  /** Opens (creating) the machine's store in `dir`. */
  static async open(dir: string, limits = { maxTxs: 100_000, maxTxBytes: 1024 * 1024 }): Promise<KvMachine> {
    const store = await BlockStore.open(dir, `${dir}.pid`);
    const mempool = new Mempool(limits, { height: () => 0n, getTxLocations: async (hashes) => hashes.map(() => null) });
    const kv = new KvExecutor(store, mempool);
    await kv.load();
    const machine = new KvMachine(store, kv, mempool);
    const height = await store.getMetadata(MetadataKey.execHeight);
    machine.height = height ? readHeight(height) : 0n;
    const genesis = await store.getMetadata(MetadataKey.execGenesis);
    machine.genesis = genesis ? (JSON.parse(Buffer.from(genesis).toString('utf8')) as GenesisRecord) : null;
    return machine;
  }

  /** Its height and state root, for its start-up log line. */
  info(): { height: bigint; stateRoot: string; chainId: string | null } {
    return { height: this.height, stateRoot: toHex(this.kv.stateRoot()), chainId: this.genesis?.chainId ?? null };
  }

  initChain(_genesisTime: bigint, initialHeight: bigint, chainId: string): Promise<Uint8Array> {
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
      this.genesis = { chainId, initialHeight: String(initialHeight), stateRoot: toHex(this.kv.stateRoot()) };
      this.height = initialHeight - 1n;
      await this.store.writeBatch([
        this.store.metadataOp(MetadataKey.execGenesis, Buffer.from(JSON.stringify(this.genesis))),
        this.store.metadataOp(MetadataKey.execHeight, heightBytes(this.height)),
      ]);
      return this.kv.stateRoot();
    });
  }

  async getTxs(): Promise<Uint8Array[]> {
    return this.kv.getTxs();
  }

  submitTx(tx: Uint8Array): Promise<void> {
    return this.kv.submitTx(tx) as Promise<void>;
  }

  executeTxs(txs: Uint8Array[], height: bigint, _time: bigint, prevStateRoot: Uint8Array): Promise<Uint8Array> {
    return this.run(async () => {
      if (!this.genesis) throw new ConnectError('InitChain first: this executor has no chain yet', Code.FailedPrecondition);
      const digest = requestDigest(prevStateRoot, txs);
      if (height <= this.height) {
        const kept = await this.store.getRaw(heightKey(Bucket.execLedger, height));
        if (kept && sameBytes(kept.subarray(0, 32), digest)) return kept.subarray(32);
        throw new ConnectError(`this executor executed another block ${height} (other txs or another state before it); ${DELETE_DATA}`, Code.FailedPrecondition);
      }
      if (height > this.height + 1n) {
        throw new ConnectError(`this executor is at height ${this.height}; block ${height} needs block ${this.height + 1n} first`, Code.OutOfRange);
      }
      if (!sameBytes(prevStateRoot, this.kv.stateRoot())) {
        throw new ConnectError(
          `block ${height} builds on state root ${toHex(prevStateRoot)} but this executor's is ${toHex(this.kv.stateRoot())}; ${DELETE_DATA}`,
          Code.FailedPrecondition,
        );
      }
      const result = await this.kv.executeTxs(txs, height, _time, prevStateRoot);
      await this.store.writeBatch([
        ...(result.storeOps ?? []),
        { type: 'put', key: heightKey(Bucket.execLedger, height), value: Buffer.concat([digest, result.stateRoot]) },
        this.store.metadataOp(MetadataKey.execHeight, heightBytes(height)),
      ]);
      this.height = height;
      this.mempool.blockCommitted();
      return result.stateRoot;
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
    await this.store.close();
  }

  private async run<T>(work: () => Promise<T>): Promise<T> {
    return (await this.exclusive(work)) as T;
  }
}
