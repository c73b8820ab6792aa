import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { BlockSchema, StateSchema, encodeBlock, txId, txIdBytes, type Block, type State, type TxId } from '../types/index.js';
import { MempoolJournal } from './mempool-journal.js';
import { TxIndexFilter } from './tx-filter.js';
import { storeOpenRemedy } from './open-error.js';
import { Bucket, MetadataKey, bucketKey, bucketKeysOf, heightKey, heightBytes, readHeight, stringKey } from './buckets.js';

type Db = ClassicLevel<Uint8Array, Uint8Array>;

/** One extra write an executor contributes to a block's atomic batch. */
export type StoreOp = { type: 'put'; key: Uint8Array; value: Uint8Array } | { type: 'del'; key: Uint8Array };

/**
 * Writes `ops` to `db` in one atomic batch, a chained batch's put or del an
 * op, not the array form db.batch(ops): that one clones each op in JS
 * (abstract-level's #arrayBatch) and reads it back in C++ a property at a
 * time, each name made anew (classic-level binding.cc, batch_do). The main
 * thread spent 2.0-2.4 ms on the ~2,000 ops of a 1,000-tx block that way,
 * 0.7 ms through the chained batch (classic-level 3.0, node 20, a
 * micro-benchmark of the same ops).
 */
export async function writeOps(db: Db, ops: StoreOp[]): Promise<void> {
  const batch = db.batch();
  try {
    for (const op of ops) {
      if (op.type === 'put') batch.put(op.key, op.value);
      else batch.del(op.key);
    }
  } catch (err) {
    await batch.close();
    throw err;
  }
  await batch.write();
}

/** The daHeights bucket's value: a block's header and data DA heights. */
function daHeightsValue(headerDaHeight: bigint, dataDaHeight: bigint): Uint8Array {
  const v = new Uint8Array(16);
  v.set(heightBytes(headerDaHeight), 0);
  v.set(heightBytes(dataDaHeight), 8);
  return v;
}

export interface StoredBlock {
  /** The block as stored (protobuf bytes); decode lazily with `block()`. */
  bytes: Uint8Array;
  height: bigint;
  headerDaHeight: bigint;
  dataDaHeight: bigint;
}

/** Where a committed tx is: its block's height and its index among the block's txs. */
export interface TxLocation {
  height: bigint;
  index: number;
}

export class StoreLockedError extends Error {
  readonly code = 'STORE_LOCKED';
}

/**
 * Format of the blocks and state this node writes. 2: ev-node's wire format
 * (slim headers, libp2p-marshalled signer keys, ev-node's State). Stores
 * written before carry no version (format 1): their headers hash and their
 * state decodes differently, so they are refused, never read. A bucket added
 * later (the mempool bucket) keeps the format: a store without it reads as
 * one with it empty, and a noded before it leaves it alone.
 */
export const STORE_FORMAT_VERSION = 2;

export class StoreFormatError extends Error {
  readonly code = 'STORE_FORMAT';
}

/**
 * The node's LevelDB: blocks, hash index, state, metadata, DA heights and the
 * acknowledged txs not yet in a block. Every block goes in with its state in
 * one atomic batch, so after a crash the store holds either the whole block or
 * none of it.
 */
export class BlockStore {
  private latestHeight = 0n;
  private daIncluded = 0n;
  private closed = false;
  private daHeightListeners: Array<(height: bigint) => void> = [];
  private readonly mempool: MempoolJournal;
  /** Which txs the tx-hash index may hold: set up by open(), kept by commitBlock. */
  private txFilter!: TxIndexFilter;

  private constructor(
    private readonly db: Db,
    readonly path: string,
  ) {
    this.mempool = new MempoolJournal(db, (ops) => this.writeBatch(ops));
  }

  /**
   * Opens (creating) the store. A LevelDB lock held by another process becomes
   * "already in use by process N", with N from the pid file beside the store.
   */
  static async open(path: string, pidFile = join(dirname(path), 'node.pid')): Promise<BlockStore> {
    const db: Db = new ClassicLevel(path, { keyEncoding: 'view', valueEncoding: 'view' });
    try {
      await db.open();
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause;
      if (cause?.code === 'LEVEL_LOCKED') {
        const pid = readPid(pidFile);
        throw new StoreLockedError(`the store ${path} is already in use by ${pid ? `process ${pid}` : 'another process'}; stop that node first`);
      }
      const remedy = storeOpenRemedy(path, cause);
      throw new Error(`cannot open the store ${path}: ${(cause as Error | undefined)?.message ?? (err as Error).message}${remedy ? `; ${remedy}` : ''}`);
    }
    const store = new BlockStore(db, path);
    try {
      await store.checkFormat();
    } catch (err) {
      await db.close();
      throw err;
    }
    await store.mempool.open();
    const state = await store.getState();
    store.latestHeight = state?.lastBlockHeight ?? 0n;
    await store.loadTxFilter();
    const included = await store.getMetadata(MetadataKey.daIncludedHeight);
    store.daIncluded = included ? readHeight(included) : 0n;
    return store;
  }

  /**
   * Refuses a store written in another format; marks a new (stateless) store
   * with this node's format before anything is written to it.
   */
  private async checkFormat(): Promise<void> {
    const stored = await this.getMetadata(MetadataKey.storeFormatVersion);
    const version = stored ? new TextDecoder().decode(stored) : null;
    if (version === String(STORE_FORMAT_VERSION)) return;
    if (version === null && !(await this.db.get(bucketKey(Bucket.state)))) {
      return this.setMetadata(MetadataKey.storeFormatVersion, new TextEncoder().encode(String(STORE_FORMAT_VERSION)));
    }
    const written = version === null ? 'an older noded (block format 1, before the ev-node wire format)' : `block format ${version}`;
    throw new StoreFormatError(
      `the store ${this.path} was written by ${written}; this noded reads block format ${STORE_FORMAT_VERSION} only. ` +
        'Stop the node, run `noded reset soft`, then `noded start` again to resync the chain from DA and peers',
    );
  }

  /**
   * Reads the saved tx filter and adds the txs of the blocks above the
   * height it holds every tx up to (every block, in a store written before
   * the filter, or saved another way); a filter made again is saved at once.
   */
  private async loadTxFilter(): Promise<void> {
    const { filter, height } = await TxIndexFilter.load(this, MetadataKey.txFilter, this.latestHeight);
    for await (const batch of inBatches(this.db.iterator({ gt: heightKey(Bucket.block, height), lt: bucketKey(Bucket.block + 1) }), 1_000)) {
      for (const [, bytes] of batch) for (const tx of fromBinary(BlockSchema, bytes).data?.txs ?? []) filter.add(txId(tx));
    }
    this.txFilter = filter;
    await filter.saveMissing(this, this.latestHeight);
  }

  /** Height of the last committed block (0 before the first). */
  height(): bigint {
    return this.latestHeight;
  }

  /**
   * Commits a block, its hash index, its txs' hash index, the state after it
   * and an executor's writes in one batch, which also takes the block's txs out
   * of the mempool bucket (MempoolJournal); produced and synced blocks alike come through here.
   * `blockBytes`: the block's protobuf, when the caller has it already.
   * `after`: the commit of the block before, when it may be under way (a
   * pipelined chain): this batch is made ready meanwhile and written once that
   * one is, never when it failed. `txIds`: the block's txs' ids (txId), when the caller has them.
   * `lateOps`: more writes for the batch, still being made (signatures computed off this thread).
   */
  async commitBlock(
    block: Block,
    hash: Uint8Array,
    state: State,
    extraOps: StoreOp[] = [],
    blockBytes: Uint8Array = encodeBlock(block),
    after?: Promise<void>,
    ids: TxId[] = (block.data?.txs ?? []).map(txId),
    lateOps?: Promise<StoreOp[]>,
  ): Promise<void> {
    const txs = block.data?.txs ?? [];
    const ops = blockOps(block, hash, state, extraOps, blockBytes, ids);
    // Added before the write: a filter that says "may hold" of a block not written yet only costs an index read.
    for (const id of ids) this.txFilter.add(id);
    const height = block.header!.header!.height;
    ops.push(...this.txFilter.saveOps(this, height));
    // The mempool hands out txs while they are being kept: the block goes in after their entries, to take them out.
    // The keeps asked for before now hold all of its txs (a tx is kept before it is handed out); those asked for
    // meanwhile, of the next block's txs, need not go first.
    const kept = this.mempool.written();
    await after;
    await kept;
    if (lateOps) for (const op of await lateOps) ops.push(op);
    // Read once the block before is written: its txs have left their entries then.
    const mempool = this.mempool.commitOps(txs);
    for (const op of mempool.ops) ops.push(op);
    await this.writeBatch(ops);
    mempool.done();
    this.latestHeight = height;
  }

  /**
   * Calls `listener` with every height whose DA heights get written, once the
   * write is done: whoever keeps a block's answer keeps its DA heights too, and
   * they change when the block is included on DA.
   */
  onDaHeightsWritten(listener: (height: bigint) => void): () => void {
    this.daHeightListeners.push(listener);
    return () => {
      this.daHeightListeners = this.daHeightListeners.filter((l) => l !== listener);
    };
  }

  async getBlock(height: bigint): Promise<StoredBlock | null> {
    const [bytes, da] = await this.db.getMany([heightKey(Bucket.block, height), heightKey(Bucket.daHeights, height)]);
    if (!bytes) return null;
    return {
      bytes,
      height,
      headerDaHeight: da ? readHeight(da, 0) : 0n,
      dataDaHeight: da ? readHeight(da, 8) : 0n,
    };
  }

  async getHeightByHash(hash: Uint8Array): Promise<bigint | null> {
    const v = await this.db.get(bucketKey(Bucket.heightByHash, hash));
    return v ? readHeight(v) : null;
  }

  /**
   * Keeps acknowledged txs in the mempool bucket; resolves once they are
   * written. Calls made while a write is under way share the next batch (group
   * commit). A block's commit waits for the writes asked for before it, so the
   * entries of its txs are there to take out.
   */
  keepMempoolTxs(txs: Uint8Array[]): Promise<void> {
    return this.mempool.keep(txs);
  }

  /**
   * The txs of the mempool bucket in the order they were acknowledged, but
   * those a committed block holds, which leave the bucket now. Read once, at start.
   */
  restoreMempoolTxs(): Promise<Uint8Array[]> {
    return this.mempool.restore(async (txs) => (await this.getTxIdLocations(txs.map(txId))).map((location) => location !== null));
  }

  /** The block and index holding the tx whose sha256 is `txHash`, or null when no committed block holds it. */
  async getTxLocation(txHash: Uint8Array): Promise<TxLocation | null> {
    if (!this.txFilter.mayHold(txHash)) return null;
    return readTxLocation(await this.db.get(bucketKey(Bucket.txByHash, txHash)));
  }

  /**
   * getTxLocation of many txs in one LevelDB call (tx admission looks up each
   * tx it takes), of those the tx filter may hold only: a new tx is mostly read from no index.
   */
  getTxLocations(txHashes: Uint8Array[]): Promise<Array<TxLocation | null>> {
    return this.locateTxs(
      txHashes,
      (hash) => this.txFilter.mayHold(hash),
      (hash) => hash,
    );
  }

  /**
   * getTxLocations by TxId, as tx admission has them: the filter reads each id
   * as it is, and bytes are made only of those it may hold (without the 32
   * bytes made of each tx for the filter alone, admission went from 8.2% to
   * 6.0% of the producer figure's CPU profile).
   */
  getTxIdLocations(txIds: TxId[]): Promise<Array<TxLocation | null>> {
    return this.locateTxs(txIds, (id) => this.txFilter.mayHoldId(id), txIdBytes);
  }

  /** Where each tx is, the txs `mayHold` keeps read in one LevelDB call: `hashOf` gives a tx's sha256 bytes. */
  private async locateTxs<T>(txs: T[], mayHold: (tx: T) => boolean, hashOf: (tx: T) => Uint8Array): Promise<Array<TxLocation | null>> {
    const locations = new Array<TxLocation | null>(txs.length).fill(null);
    const held: number[] = [];
    for (let i = 0; i < txs.length; i++) if (mayHold(txs[i]!)) held.push(i);
    if (held.length === 0) return locations;
    const values = await this.db.getMany(
      bucketKeysOf(
        Bucket.txByHash,
        held.map((i) => hashOf(txs[i]!)),
      ),
    );
    held.forEach((i, at) => (locations[i] = readTxLocation(values[at])));
    return locations;
  }

  async getState(): Promise<State | null> {
    const v = await this.db.get(bucketKey(Bucket.state));
    return v ? fromBinary(StateSchema, v) : null;
  }

  /** The write that records where a block's header and data were included on DA. */
  daHeightsOp(height: bigint, headerDaHeight: bigint, dataDaHeight: bigint): StoreOp {
    return { type: 'put', key: heightKey(Bucket.daHeights, height), value: daHeightsValue(headerDaHeight, dataDaHeight) };
  }

  /** The write that keeps a produced block's DA blob signatures until it is on DA (Bucket.daSignatures). */
  daSignaturesOp(height: bigint, signatures: Uint8Array): StoreOp {
    return { type: 'put', key: heightKey(Bucket.daSignatures, height), value: signatures };
  }

  /** The DA blob signatures kept for each of `heights`, in order: undefined where none are. */
  async getDaSignatures(heights: bigint[]): Promise<Array<Uint8Array | undefined>> {
    return this.db.getMany(heights.map((height) => heightKey(Bucket.daSignatures, height)));
  }

  /**
   * Deletes the DA blob signatures kept for heights up to `to`: those blocks
   * are on DA, recorded while another node led (HA) or by a noded that
   * deleted them after the DA heights.
   */
  async clearDaSignatures(to: bigint): Promise<void> {
    await this.db.clear({ gte: bucketKey(Bucket.daSignatures), lte: heightKey(Bucket.daSignatures, to) });
  }

  async setDaHeights(height: bigint, headerDaHeight: bigint, dataDaHeight: bigint): Promise<void> {
    await this.writeBatch([this.daHeightsOp(height, headerDaHeight, dataDaHeight)]);
  }

  /**
   * Records DA inclusion of an aggregator's blocks `from..to` (all at one DA
   * height), which moves the DA-included height, and deletes the DA blob
   * signatures kept for them, in one batch. The deletes ride in the batch
   * rather than a range clear after it: a clear per submission ran an
   * iterator on the threadpool about once a second, and the soak's RssAnon
   * slope rose with it.
   */
  async markDaIncluded(from: bigint, to: bigint, headerDaHeight: bigint, dataDaHeight: bigint): Promise<void> {
    // Every height gets the same value: made once (a backlog's submission marks over a thousand heights).
    const value = daHeightsValue(headerDaHeight, dataDaHeight);
    const ops: StoreOp[] = [];
    for (let h = from; h <= to; h++) {
      ops.push({ type: 'put', key: heightKey(Bucket.daHeights, h), value }, { type: 'del', key: heightKey(Bucket.daSignatures, h) });
    }
    await this.writeBatch(ops);
  }

  /**
   * Highest height whose header and data are known on DA (0 when none). On an
   * aggregator every block up to it is included; a full node records each block
   * it finds on DA, in height order.
   */
  daIncludedHeight(): bigint {
    return this.daIncluded;
  }

  /** Blocks above the DA-included height: an aggregator's pending blocks, or those a full node has not yet found on DA. */
  blocksNotOnDa(): bigint {
    return this.latestHeight > this.daIncluded ? this.latestHeight - this.daIncluded : 0n;
  }

  async getMetadata(key: string): Promise<Uint8Array | null> {
    return (await this.db.get(stringKey(Bucket.metadata, key))) ?? null;
  }

  metadataOp(key: MetadataKey | string, value: Uint8Array): StoreOp {
    return { type: 'put', key: stringKey(Bucket.metadata, key), value };
  }

  async setMetadata(key: MetadataKey | string, value: Uint8Array): Promise<void> {
    await this.writeBatch([this.metadataOp(key, value)]);
  }

  /**
   * Writes `ops` in one atomic batch (an executor serving its machine out of
   * the node's process keeps its state and ledger in a store of its own).
   * Every batch the store writes goes through here, so no DA-height write
   * escapes the listeners or the DA-included height: a block whose DA heights
   * are written above it moves it, in the same batch, whoever wrote them (the
   * aggregator's submitter, or a full node that found the block on DA).
   */
  async writeBatch(ops: StoreOp[]): Promise<void> {
    const daWritten: bigint[] = [];
    let included = this.daIncluded;
    for (const op of ops) {
      if (op.type !== 'put' || op.key[0] !== Bucket.daHeights) continue;
      const height = readHeight(op.key, 1);
      daWritten.push(height);
      if (height > included) included = height;
    }
    if (included > this.daIncluded) ops = [...ops, this.metadataOp(MetadataKey.daIncludedHeight, heightBytes(included))];
    await writeOps(this.db, ops);
    if (included > this.daIncluded) this.daIncluded = included;
    for (const height of daWritten) for (const listener of this.daHeightListeners) listener(height);
  }

  /** Reads many keys of a bucket in one call, in order; null where absent. */
  async getMany(keys: Uint8Array[]): Promise<(Uint8Array | null)[]> {
    return (await this.db.getMany(keys)).map((v) => v ?? null);
  }

  /** Every key of a bucket (without the bucket byte), a batch at a time. */
  async *bucketKeys(bucket: Bucket, batchSize = 10_000): AsyncGenerator<Uint8Array[]> {
    for await (const keys of inBatches(this.db.keys({ gte: bucketKey(bucket), lt: bucketKey(bucket + 1) }), batchSize)) {
      yield keys.map((key) => key.subarray(1));
    }
  }

  /**
   * The stored blocks of heights `from..to`, in height order, ending at the
   * first height the store lacks; about a megabyte at a time: one pass over
   * the store instead of a read a block.
   */
  async *blocksInRange(from: bigint, to: bigint): AsyncGenerator<Array<{ height: bigint; bytes: Uint8Array }>> {
    const entries = this.db.iterator({ gte: heightKey(Bucket.block, from), lte: heightKey(Bucket.block, to), highWaterMarkBytes: 1024 * 1024 });
    let next = from;
    for await (const batch of inBatches(entries, RANGE_BATCH_BLOCKS)) {
      const blocks = [];
      for (const [key, bytes] of batch) {
        const height = readHeight(key, 1);
        if (height !== next) break;
        blocks.push({ height, bytes });
        next++;
      }
      if (blocks.length > 0) yield blocks;
      if (blocks.length < batch.length) return;
    }
  }

  /** Reads one key of a bucket (executors keep their state in their own bucket). */
  async getRaw(key: Uint8Array): Promise<Uint8Array | null> {
    return (await this.db.get(key)) ?? null;
  }

  /** Closes the store; safe to call more than once. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.mempool.written();
    } finally {
      await this.db.close();
    }
  }
}

/**
 * A block's writes but the mempool bucket's: the block, its hash index, its
 * txs' hash index (of `txIds`, its txs' txId), the state after it and `extraOps` (the executor's).
 */
function blockOps(block: Block, hash: Uint8Array, state: State, extraOps: StoreOp[], blockBytes: Uint8Array, txIds: TxId[]): StoreOp[] {
  const height = block.header!.header!.height;
  const ops: StoreOp[] = [
    { type: 'put', key: heightKey(Bucket.block, height), value: blockBytes },
    { type: 'put', key: bucketKey(Bucket.heightByHash, hash), value: heightBytes(height) },
  ];
  // Pushed one by one, not spread: each spread of a block's thousands of ops made an array of them again.
  pushTxIndexOps(ops, txIds, height);
  ops.push({ type: 'put', key: bucketKey(Bucket.state), value: toBinary(StateSchema, state) });
  for (const op of extraOps) ops.push(op);
  return ops;
}

/** A tx-hash index key: the bucket byte and the tx's sha256. */
const TX_KEY_BYTES = 33;
/** A tx-hash index entry: its key, then height (8 BE) ‖ index in the block (4 BE). */
const TX_ENTRY_BYTES = TX_KEY_BYTES + 12;

/**
 * Pushes onto `ops` the tx-hash index entries of a block's txs, given their ids (sha256 of the tx bytes, as
 * CometBFT's types.Tx.Hash). A tx a later block holds again points there:
 * CometBFT's kv tx indexer also keeps the latest (state/txindex/kv/kv.go).
 * Every key and value is a view of one buffer: three small buffers a tx (and
 * a DataView over each) took ~18 ms of a 1,000-tx block, one takes under 1 ms.
 * The ids are written into it as they are (no 32-byte view a tx made first),
 * and the views are plain Uint8Arrays (a Buffer's subarray costs more to make).
 */
function pushTxIndexOps(ops: StoreOp[], txIds: TxId[], height: bigint): void {
  const entries = new Uint8Array(txIds.length * TX_ENTRY_BYTES);
  const text = Buffer.from(entries.buffer);
  const view = new DataView(entries.buffer);
  for (let index = 0; index < txIds.length; index++) {
    const at = index * TX_ENTRY_BYTES;
    entries[at] = Bucket.txByHash;
    text.write(txIds[index]!, at + 1, 32, 'latin1');
    view.setBigUint64(at + TX_KEY_BYTES, height);
    view.setUint32(at + TX_KEY_BYTES + 8, index);
    ops.push({ type: 'put', key: entries.subarray(at, at + TX_KEY_BYTES), value: entries.subarray(at + TX_KEY_BYTES, at + TX_ENTRY_BYTES) });
  }
}

/**
 * Blocks a read of blocksInRange asks for. classic-level's nextv(n) reserves n
 * entries before it reads (ReadMany, binding.cc), though the megabyte cap
 * stops it after a few dozen blocks of txs: 10,000 was 640 KB for each read
 * of the DA submitter (one a second or more), and in the soak figure 47 of the
 * 69 MB by which the thread pool's malloc arenas grew (perf on their mprotect
 * calls, 10 minutes). 1,000 empty blocks are still one read.
 */
const RANGE_BATCH_BLOCKS = 1_000;

/** What a LevelDB iterator yields, `size` at a time, closing the iterator however the caller stops. */
async function* inBatches<T>(iterator: { nextv(size: number): Promise<T[]>; close(): Promise<void> }, size: number): AsyncGenerator<T[]> {
  try {
    for (let batch = await iterator.nextv(size); batch.length > 0; batch = await iterator.nextv(size)) yield batch;
  } finally {
    await iterator.close();
  }
}

export const decodeStoredBlock = (stored: StoredBlock): Block => fromBinary(BlockSchema, stored.bytes);

export function emptyState(chainId: string, initialHeight: bigint): State {
  return create(StateSchema, { chainId, initialHeight, lastBlockHeight: 0n });
}

function readPid(pidFile: string): number | null {
  let pid: number;
  try {
    pid = Number.parseInt(readFileSync(pidFile, 'utf8').trim(), 10);
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid <= 0) return null;
  // A pid file left by a killed node names a process that is gone: say nothing rather than blame it.
  try {
    process.kill(pid, 0);
    return pid;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? pid : null;
  }
}

function readTxLocation(v: Uint8Array | undefined): TxLocation | null {
  return v ? { height: readHeight(v), index: new DataView(v.buffer, v.byteOffset, v.byteLength).getUint32(8) } : null;
}
