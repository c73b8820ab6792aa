import type { TxLocation } from '../store/index.js';
import { txId, type TxId } from '../types/index.js';
import { TxBackpressureError, TxRejectedError } from './executor.js';

export interface MempoolLimits {
  maxTxs: number;
  /** Largest tx accepted, in bytes. */
  maxTxBytes: number;
  /** What a sender told "mempool full" should wait before trying again (about a block time), in seconds. */
  retryAfterSeconds: number;
}

/**
 * The store as the mempool uses it: the tx-hash index to refuse committed
 * txs, and the mempool bucket that keeps acknowledged txs through a crash.
 */
export interface MempoolStore {
  /** Where each tx of these ids is committed, or null. */
  getTxIdLocations(txIds: TxId[]): Promise<Array<TxLocation | null>>;
  keepMempoolTxs(txs: Uint8Array[]): Promise<void>;
  /** The kept txs no committed block holds, in the order they were kept. */
  restoreMempoolTxs(): Promise<Uint8Array[]>;
}

/** Calls `fn` with each index in `indexes`, or with 0 to count - 1 when it is null (every tx of a batch: no array is made). */
function forEachIndex(indexes: number[] | null, count: number, fn: (i: number) => void): void {
  if (indexes) for (const i of indexes) fn(i);
  else for (let i = 0; i < count; i++) fn(i);
}

/**
 * Txs admitted together: their index lookup, then their write to the store.
 * Each add() answers from the batch's outcome: one promise a batch instead of
 * one, its two resolvers and a record a tx (mempool.add was a fifth of the
 * producer figure's allocations at 1,000 txs a block).
 */
class AdmissionBatch {
  readonly ids: string[] = [];
  readonly txs: Uint8Array[] = [];
  /** Why a tx failed, by its index in the batch; null while none has. */
  private failures: Map<number, Error> | null = null;
  private settle: () => void = () => {};
  /** Resolves (never rejects) once every tx of the batch is queued and kept, or failed. */
  private readonly settled = new Promise<void>((resolve) => (this.settle = resolve));

  fail(index: number, err: Error): void {
    (this.failures ??= new Map()).set(index, err);
  }

  failed(index: number): boolean {
    return this.failures?.has(index) ?? false;
  }

  /** Every tx is queued and kept, or failed: their add()s answer. */
  done(): void {
    this.settle();
  }

  /** add()'s answer for the tx at `index`. */
  outcome(index: number): Promise<void> {
    return this.settled.then(() => {
      const err = this.failures?.get(index);
      if (err) throw err;
    });
  }
}

/**
 * A tx the node holds already: waiting in the mempool or committed in a block.
 * CometBFT refuses both with ErrTxInCache (mempool/errors.go), its cache
 * keeping committed txs too (mempool/clist_mempool.go, Update).
 */
export class TxAlreadyKnownError extends TxRejectedError {
  /** Where the tx is, in words: "waiting in the mempool" or "committed in block N (index I)". */
  readonly where: string;

  constructor(readonly location: TxLocation | null) {
    const where = location ? `committed in block ${location.height} (index ${location.index})` : 'waiting in the mempool';
    super(location ? `tx already ${where}` : 'tx already in mempool', 409);
    this.where = where;
    this.name = 'TxAlreadyKnownError';
  }
}

/**
 * Txs waiting for a block, first in first out, each at most once, and never
 * one a committed block holds. A tx is acknowledged (add() resolves) only once
 * the store keeps it: a node killed then re-admits it on start (restore()), and
 * the commit of the block holding it, which waits for that write, takes it out of the store.
 */
export class Mempool {
  private readonly txs = new Map<string, Uint8Array>();
  private totalBytes = 0;
  /**
   * Txs taken for blocks not yet committed (a pipelined chain builds one
   * while the one before is written), by id: not in the store's index yet,
   * and not to be queued again.
   */
  private readonly inBlock = new Set<TxId>();
  /**
   * What the last take() returned, and the ids of those txs: the chain reads
   * the ids of the block it builds of them here (txIds) instead of hashing
   * its txs again. A map of every tx handed out to its id, in place of it,
   * cost 2.9% more of the producer figure's CPU profile (getTxs,
   * blockCommitted and txIds: 6.1% against 3.2%).
   */
  private lastTaken: { txs: Uint8Array[]; ids: TxId[] } = { txs: [], ids: [] };
  /** Txs whose lookup has not started yet: looked up together, in one LevelDB getMany. */
  private batch: AdmissionBatch | null = null;
  /** Ids of every tx being admitted (batched or under lookup), so a second copy is refused at once. */
  private readonly admitting = new Set<string>();
  /**
   * How many committed blocks held a tx this mempool did not hand out (a
   * forced tx, a block synced from DA or a peer): such a block may hold a tx
   * being admitted, so a lookup under way when one lands is made again.
   */
  private foreignBlocks = 0;
  /** Index lookups under way. */
  private readonly lookups = new Set<Promise<void>>();

  constructor(
    private readonly limits: MempoolLimits,
    private readonly store: MempoolStore,
  ) {}

  /**
   * Re-admits the txs the store kept (acknowledged before the node last
   * stopped, and in no block it committed), in the order they came. Call
   * once, before txs are added.
   * Resolves with how many were re-admitted; the mempool's cap does not apply
   * to them, since each was acknowledged.
   */
  async restore(): Promise<number> {
    let restored = 0;
    for (const tx of await this.store.restoreMempoolTxs()) {
      const id = txId(tx);
      if (this.txs.has(id)) continue;
      this.txs.set(id, tx);
      this.totalBytes += tx.length;
      restored++;
    }
    return restored;
  }

  get size(): number {
    return this.txs.size;
  }

  /** Bytes of the txs waiting. */
  get bytes(): number {
    return this.totalBytes;
  }

  /**
   * Queues a tx once no committed block holds it and the store keeps it. The
   * index lookups of the txs that arrive together are made in one LevelDB call
   * (one get per tx cost the producer figure a third of its throughput at 1,000
   * txs a block), as are those of the txs that arrive while a lookup runs (one
   * call per POST /tx, each a thread-pool round trip, was a quarter of a
   * devnet's CPU profile at 1,000 tx/s), and their writes share one batch with
   * whatever else arrived while the last one was written.
   */
  add(tx: Uint8Array): Promise<void> {
    if (tx.length > this.limits.maxTxBytes) {
      return Promise.reject(new TxRejectedError(`tx is ${tx.length} bytes; the limit is ${this.limits.maxTxBytes}`, 413));
    }
    const id = txId(tx);
    try {
      this.refuseIfFullOrHeld(id, this.admitting.size);
    } catch (err) {
      return Promise.reject(err);
    }
    this.admitting.add(id);
    const batch = (this.batch ??= new AdmissionBatch());
    batch.ids.push(id);
    const index = batch.txs.push(tx) - 1;
    // A lookup under way starts the next when it ends (lookUp), with every tx that came meanwhile.
    if (index === 0 && this.lookups.size === 0) queueMicrotask(() => this.lookUp());
    return batch.outcome(index);
  }

  /**
   * Resolves once every tx whose add() has been called so far is queued or
   * refused: the producer takes a block's txs after this, so a tx that arrived
   * before the block is not left for the next one while its lookup runs.
   */
  async settled(): Promise<void> {
    this.lookUp();
    await Promise.all([...this.lookups]);
  }

  private lookUp(): void {
    const batch = this.batch;
    if (!batch) return;
    this.batch = null;
    const lookup = this.admit(batch).finally(() => {
      this.lookups.delete(lookup);
      if (this.lookups.size === 0) this.lookUp();
    });
    this.lookups.add(lookup);
  }

  private async admit(batch: AdmissionBatch): Promise<void> {
    const { ids, txs } = batch;
    /** Indexes in the batch of the txs not refused yet; null while that is all of them (no array made a lookup then). */
    let pending: number[] | null = null;
    try {
      // A block committed while the index was read may hold a tx being admitted only if the tx did not come from
      // here (a tx handed out was refused when it came again): after such a block, read again. A pipelined
      // producer commits a block during most lookups; reading again each time doubled the index reads.
      for (let seen = -1; (pending === null || pending.length > 0) && seen !== this.foreignBlocks;) {
        seen = this.foreignBlocks;
        const asked: number[] | null = pending;
        const locations = await this.store.getTxIdLocations(asked ? asked.map((i) => ids[i]!) : ids);
        if (!locations.some((location) => location !== null)) continue;
        pending = [];
        for (let at = 0; at < locations.length; at++) {
          const i = asked ? asked[at]! : at;
          const location = locations[at];
          if (!location) {
            pending.push(i);
            continue;
          }
          this.admitting.delete(ids[i]!);
          batch.fail(i, new TxAlreadyKnownError(location));
        }
      }
    } catch (err) {
      forEachIndex(pending, ids.length, (i) => {
        this.admitting.delete(ids[i]!);
        batch.fail(i, err as Error);
      });
      batch.done();
      return;
    }
    // Each tx here was refused by add() if the mempool held it, and none is queued or handed out while it is
    // admitted (its id is in `admitting`, which add() refuses): only the room is checked again.
    const accepted: Uint8Array[] = [];
    forEachIndex(pending, ids.length, (i) => {
      const id = ids[i]!;
      const tx = txs[i]!;
      this.admitting.delete(id);
      if (this.txs.size >= this.limits.maxTxs) {
        batch.fail(i, this.fullError());
        return;
      }
      this.txs.set(id, tx);
      this.totalBytes += tx.length;
      accepted.push(tx);
    });
    if (accepted.length > 0) void this.keep(batch, accepted, pending);
    else batch.done();
  }

  /**
   * Acknowledges the `accepted` txs of a batch once the store keeps them:
   * those of `indexes` (every tx of the batch when null) not failed yet.
   * They are queued already, so the block being built takes them while they
   * are written: the store commits that block only after these writes
   * (BlockStore.commitBlock).
   */
  private async keep(batch: AdmissionBatch, accepted: Uint8Array[], indexes: number[] | null): Promise<void> {
    try {
      await this.store.keepMempoolTxs(accepted);
    } catch (err) {
      forEachIndex(indexes, batch.ids.length, (i) => {
        // A tx the room check refused was not queued: it has its answer.
        if (batch.failed(i)) return;
        if (this.txs.delete(batch.ids[i]!)) this.totalBytes -= batch.txs[i]!.length;
        batch.fail(i, err as Error);
      });
    }
    batch.done();
  }

  private fullError(): TxBackpressureError {
    return new TxBackpressureError(
      `mempool full (${this.limits.maxTxs} txs waiting); retry after the next block or raise --node.node.mempool_max_txs`,
      this.limits.retryAfterSeconds,
    );
  }

  /** Refuses a tx the mempool has no room for (counting `incoming` txs still being admitted) or holds already. */
  private refuseIfFullOrHeld(id: string, incoming: number): void {
    if (this.txs.size + incoming >= this.limits.maxTxs) throw this.fullError();
    if (this.txs.has(id) || this.inBlock.has(id) || this.admitting.has(id)) throw new TxAlreadyKnownError(null);
  }

  /** Up to `limit` waiting txs, oldest first, left in the mempool (unconfirmed_txs). */
  peek(limit: number): Uint8Array[] {
    const out: Uint8Array[] = [];
    for (const tx of this.txs.values()) {
      if (out.length >= limit) break;
      out.push(tx);
    }
    return out;
  }

  /** Removes and returns up to `maxCount` txs totalling at most `maxBytes`, oldest first, for the next block. */
  take(maxCount: number, maxBytes: number): Uint8Array[] {
    const out: Uint8Array[] = [];
    const ids: TxId[] = [];
    let bytes = 0;
    for (const [id, tx] of this.txs) {
      if (out.length >= maxCount || bytes + tx.length > maxBytes) break;
      out.push(tx);
      ids.push(id);
      bytes += tx.length;
      this.txs.delete(id);
      this.inBlock.add(id);
    }
    this.totalBytes -= bytes;
    this.lastTaken = { txs: out, ids };
    return out;
  }

  /**
   * Puts txs `take` gave back at the head of the line, in their order (an
   * execution layer postponed them to a later block; the HA fence refused
   * their block). Txs `take` did not give out (forced txs) are left out.
   */
  requeue(txs: Uint8Array[]): void {
    const back = this.txIds(txs)
      .map((id, i) => [id, txs[i]!] as const)
      .filter(([id]) => this.inBlock.delete(id));
    for (const [, tx] of back) this.totalBytes += tx.length;
    const rest = [...this.txs];
    this.txs.clear();
    for (const [id, tx] of [...back, ...rest]) this.txs.set(id, tx);
  }

  /**
   * Each tx's id: for the txs the last take() returned, when `txs` ends with
   * them (the block built of them, forced txs first), the ids kept with them;
   * else its sha256.
   */
  txIds(txs: Uint8Array[]): TxId[] {
    const taken = this.lastTaken;
    const from = txs.length - taken.txs.length;
    if (from < 0 || taken.txs.length === 0 || !taken.txs.every((tx, i) => txs[from + i] === tx)) return txs.map(txId);
    return from === 0 ? taken.ids : [...txs.slice(0, from).map(txId), ...taken.ids];
  }

  /**
   * A block holding `txs` is committed (`ids`: their ids, as txIds gives
   * them): the store's index now answers for them (txs taken for a later block stay held here).
   */
  blockCommitted(txs: Uint8Array[], ids: TxId[] = this.txIds(txs)): void {
    let foreign = false;
    for (const id of ids) if (!this.inBlock.delete(id)) foreign = true;
    if (foreign) this.foreignBlocks++;
  }
}
