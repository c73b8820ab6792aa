import { hash } from 'node:crypto';
import type { ExecTxResult } from 'cosmjs-types/tendermint/abci/types';
import { Bucket, MetadataKey, stringKey, type BlockStore, type StoreOp } from '../../store/index.js';
import { decodeBlock } from '../../types/index.js';
import { TxRejectedError, type BlockResults, type ExecResult, type Executor } from '../executor.js';
import { filterBySize, type FilterStatus } from '../filter.js';
import type { Mempool } from '../mempool.js';
import { KeyFilter } from './key-filter.js';

/** Most txs and bytes one block takes from the mempool. */
export const MAX_BLOCK_TXS = 10_000;
export const MAX_BLOCK_TX_BYTES = 8 * 1024 * 1024;

const TWO_POW_32 = 0x1_0000_0000;

/**
 * Metadata key of the saved key filter (KeyFilter, SlicedFilterSaver): the header; its
 * slices under `kv_key_filter/<layer>/<slice>`.
 */
const SAVED_KEY_FILTER = 'kv_key_filter';
/**
 * Blocks over which the key filter is saved once whole, a slice in the batch
 * of a block every few blocks (a filter made anew, or a new layer, is saved
 * first, a few slices a block): a start reads the txs of about this many
 * blocks instead of every state key.
 */
const KEY_FILTER_SAVE_BLOCKS = 1_000;

/**
 * A number mod 2^256 as eight 32-bit limbs, most significant first (a sha256
 * digest's byte order), so entries go in and out without BigInt.
 */
class Sum256 {
  private readonly limbs = new Uint32Array(8);

  /** From its 32 big-endian bytes; empty bytes are 0. */
  static fromBytes(bytes: Uint8Array): Sum256 {
    const sum = new Sum256();
    if (bytes.length > 0) {
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      for (let i = 0; i < 8; i++) sum.limbs[i] = view.getUint32(4 * i);
    }
    return sum;
  }

  copy(): Sum256 {
    const sum = new Sum256();
    sum.limbs.set(this.limbs);
    return sum;
  }

  /** Adds (`sign` 1) or subtracts (`sign` -1) a sha256 digest held as a binary (latin1) string. */
  add(digest: string, sign: 1 | -1): void {
    let carry = 0;
    for (let i = 7; i >= 0; i--) {
      const at = 4 * i;
      const word = ((digest.charCodeAt(at) << 24) | (digest.charCodeAt(at + 1) << 16) | (digest.charCodeAt(at + 2) << 8) | digest.charCodeAt(at + 3)) >>> 0;
      const v = this.limbs[i]! + sign * word + carry;
      this.limbs[i] = v; // stored mod 2^32
      carry = Math.floor(v / TWO_POW_32); // -1, 0 or 1
    }
  }

  /** The 32 big-endian bytes. */
  bytes(): Uint8Array {
    const out = new Uint8Array(32);
    const view = new DataView(out.buffer);
    for (let i = 0; i < 8; i++) view.setUint32(4 * i, this.limbs[i]!);
    return out;
  }
}

/** Entries up to this size are hashed from one reused buffer; bigger ones get their own. */
const scratch = new Uint8Array(4096);
const scratchView = new DataView(scratch.buffer);
/**
 * The first `size` bytes of `scratch`, by size, each made once: a view made
 * for each digest was a tenth of the kv machine's allocations (a block's
 * entries are mostly of a few sizes).
 */
const scratchHeads: Uint8Array[] = [];

/**
 * sha256(len(key) ‖ key ‖ value) as a binary string: one entry's share of the
 * state sum. The key is the `keyLength` bytes of `bytes` from `keyAt` (a
 * write's entry, or a store key, holds it: no view of it needed).
 */
function entryDigest(bytes: Uint8Array, keyAt: number, keyLength: number, value: Uint8Array): string {
  const size = 4 + keyLength + value.length;
  const buf = size <= scratch.length ? scratch : new Uint8Array(size);
  (buf === scratch ? scratchView : new DataView(buf.buffer)).setUint32(0, keyLength);
  for (let i = 0; i < keyLength; i++) buf[4 + i] = bytes[keyAt + i]!;
  buf.set(value, 4 + keyLength);
  return hash('sha256', buf === scratch ? (scratchHeads[size] ??= scratch.subarray(0, size)) : buf, 'binary');
}

/** The state root: sha256 of the sum's 32 bytes. */
const stateRootOf = (sum: Sum256): Uint8Array => hash('sha256', sum.bytes(), 'buffer');

const NOT_KEY_VALUE = 'tx must be key=value with a non-empty key';

/** Where the key of a `key=value` tx ends (at its first '='); 0 or less when the tx is not one. */
const keyEnd = (tx: Uint8Array) => tx.indexOf(0x3d);

/**
 * A block's writes: each `key=value` tx copied behind the kv bucket's byte into
 * one buffer, so a write's entry (bucket ‖ key ‖ '=' ‖ value), its store key
 * and its value are plain views of it, made with no copy each, and its key
 * string is read out of it with no view at all (five views a tx, four of them
 * Buffers, were a tenth of the kv machine's time and a share of the GC's).
 */
class BlockWrites {
  /** By key (latin1), each write's entry: the last write to a key in the block wins. */
  readonly byKey = new Map<string, Uint8Array>();
  private readonly bytes: Uint8Array;
  private readonly text: Buffer;

  constructor(txs: Uint8Array[]) {
    let size = 0;
    for (const tx of txs) size += 1 + tx.length;
    this.bytes = new Uint8Array(size);
    this.text = Buffer.from(this.bytes.buffer);
    let at = 0;
    for (const tx of txs) {
      const eq = keyEnd(tx);
      if (eq <= 0) continue; // not key=value: skipped
      this.bytes[at] = Bucket.kvState;
      this.bytes.set(tx, at + 1);
      this.byKey.set(this.text.toString('latin1', at + 1, at + 1 + eq), this.bytes.subarray(at, at + 1 + tx.length));
      at += 1 + tx.length;
    }
  }
}

/** An entry's key length: its '=' is the first after the bucket byte (not '='). */
const entryKeyLength = (entry: Uint8Array) => entry.indexOf(0x3d) - 1;
/** An entry's value: the bytes after its '='. */
const entryValue = (entry: Uint8Array, keyLength: number) => entry.subarray(2 + keyLength);
/** An entry's store key: the bucket byte and the key. */
const entryStoreKey = (entry: Uint8Array, keyLength: number) => entry.subarray(0, 1 + keyLength);

/**
 * An ExecTxResult with every other field at its zero value, as cosmjs-types'
 * ExecTxResult.fromPartial fills it (the test compares them): built here so a
 * kv node does not load cosmjs-types' ABCI codecs, megabytes of heap it never
 * uses otherwise.
 */
const txResult = (code: number, log: string): ExecTxResult => ({
  code,
  data: new Uint8Array(0),
  log,
  info: '',
  gasWanted: 0n,
  gasUsed: 0n,
  events: [],
  codespace: '',
});

/**
 * The built-in key/value state machine. Its state lives in the node's store
 * (bucket kvState) and its writes join the block's batch, so state and chain
 * cannot drift apart after a crash.
 *
 * The state root is sha256 of an additive multiset hash (sum mod 2^256 of every
 * entry's hash): it depends only on the set of entries, not on history, and a
 * write updates it in O(1) instead of rehashing the whole state.
 */
export class KvExecutor implements Executor {
  private sum = new Sum256();
  /** sha256 of the sum's bytes, kept beside it. */
  private root = stateRootOf(this.sum);
  /** Every key in the state (loaded by `load()`, then kept up with every block). */
  private keys = KeyFilter.empty(SAVED_KEY_FILTER, KEY_FILTER_SAVE_BLOCKS);
  /**
   * The last block executed: its writes by key (latin1), each its entry
   * (BlockWrites). A pipelined chain executes a block while the one before is being
   * written (Executor.pipelined), so the old values it overwrites are read
   * here first: the store may not hold that block's yet. The chain keeps at
   * most that one block uncommitted below the one it executes.
   */
  private lastBlockWrites = new Map<string, Uint8Array>();

  /** Blocks execute while the block before is being written: they read its writes through `lastBlockWrites`. */
  readonly pipelined = true;

  constructor(
    private readonly store: BlockStore,
    private readonly mempool: Mempool,
    /** Largest total of tx bytes one block takes (a block must fit one DA blob). */
    private readonly maxBlockTxBytes = MAX_BLOCK_TX_BYTES,
  ) {}

  /**
   * Loads the sum committed with the last block, and the key filter: the one
   * saved with the state of an earlier block, with the keys of the blocks
   * since added from their txs; failing that, every key of the state (a few
   * seconds a million keys), saved at once.
   */
  async load(): Promise<void> {
    this.setSum(Sum256.fromBytes((await this.store.getMetadata(MetadataKey.kvStateRoot)) ?? new Uint8Array(0)));
    if (await this.loadSavedKeys()) return;
    this.keys = KeyFilter.empty(SAVED_KEY_FILTER, KEY_FILTER_SAVE_BLOCKS);
    for await (const batch of this.store.bucketKeys(Bucket.kvState)) for (const key of batch) this.keys.add(key);
    // Saved now, not over the next blocks: a node restarted before it makes them would scan again.
    await this.keys.saveMissing(this.store, this.store.height());
  }

  /**
   * The saved key filter, brought up to the store's last block by the keys its
   * later blocks wrote (executeTxs writes the key of every key=value tx, and
   * nothing else writes the state); false when there is none to use: none
   * saved, another format, saved past the store's height or short of blocks
   * it no longer holds (a filter missing a key would leave that key's old
   * value in the sum), or saved too many blocks ago.
   */
  private async loadSavedKeys(): Promise<boolean> {
    const tip = this.store.height();
    const saved = await KeyFilter.load(this.store, SAVED_KEY_FILTER, KEY_FILTER_SAVE_BLOCKS, tip);
    // More blocks than two passes of the save since (written without this executor): reading them may cost more than the scan.
    if (!saved || tip - saved.height > 2n * BigInt(KEY_FILTER_SAVE_BLOCKS)) return false;
    const { keys } = saved;
    let next = saved.height + 1n;
    for await (const blocks of this.store.blocksInRange(next, tip)) {
      for (const { bytes } of blocks) {
        for (const tx of decodeBlock(bytes).data?.txs ?? []) {
          const eq = keyEnd(tx);
          if (eq > 0) keys.add(tx, eq);
        }
      }
      next += BigInt(blocks.length);
    }
    if (next <= tip) return false;
    this.keys = keys;
    return true;
  }

  stateRoot(): Uint8Array {
    return this.root;
  }

  private setSum(sum: Sum256): void {
    this.sum = sum;
    this.root = stateRootOf(sum);
  }

  async initChain(): Promise<Uint8Array> {
    return this.stateRoot();
  }

  /** Checks a submitted tx and queues it. */
  submitTx(tx: Uint8Array): Promise<void> {
    if (keyEnd(tx) <= 0) throw new TxRejectedError(NOT_KEY_VALUE, 400);
    return this.mempool.add(tx);
  }

  async getTxs(_time?: bigint, maxBytes = Infinity): Promise<Uint8Array[]> {
    await this.mempool.settled();
    return this.mempool.take(MAX_BLOCK_TXS, Math.min(MAX_BLOCK_TX_BYTES, this.maxBlockTxBytes, maxBytes));
  }

  /** FilterTxs: a tx that is not `key=value` (what submitTx refuses) is removed; the rest by size. */
  filterTxs(txs: Uint8Array[], maxBytes: number): Promise<FilterStatus[]> {
    return filterBySize(txs, maxBytes, (tx) => keyEnd(tx) > 0);
  }

  async executeTxs(txs: Uint8Array[], height: bigint, _time: bigint, prevStateRoot: Uint8Array): Promise<ExecResult> {
    if (Buffer.compare(prevStateRoot, this.root) !== 0) {
      throw new Error(`state root mismatch at height ${height}: the kv state is not the one the block builds on`);
    }
    const writes = new BlockWrites(txs);
    const sum = this.sum.copy();
    const storeOps: StoreOp[] = [];
    /** Store keys that may be in the state already: their old values come out of the sum. */
    const overwritten: Uint8Array[] = [];
    // forEach, not for-of: no [key, value] array a write.
    writes.byKey.forEach((entry, name) => {
      const keyLength = entryKeyLength(entry);
      const storeKey = entryStoreKey(entry, keyLength);
      const value = entryValue(entry, keyLength);
      storeOps.push({ type: 'put', key: storeKey, value });
      sum.add(entryDigest(entry, 1, keyLength, value), 1);
      if (!this.keys.add(entry, keyLength, 1)) return;
      const lastBlockEntry = this.lastBlockWrites.get(name);
      if (lastBlockEntry) sum.add(entryDigest(lastBlockEntry, 1, keyLength, entryValue(lastBlockEntry, keyLength)), -1);
      else overwritten.push(storeKey);
    });
    const olds = overwritten.length ? await this.store.getMany(overwritten) : [];
    olds.forEach((old, i) => {
      if (old) sum.add(entryDigest(overwritten[i]!, 1, overwritten[i]!.length - 1, old), -1);
    });
    this.setSum(sum);
    this.lastBlockWrites = writes.byKey;
    storeOps.push(this.store.metadataOp(MetadataKey.kvStateRoot, sum.bytes()));
    // The filter holds this block's keys already: a slice saved in its batch covers the state that batch writes.
    storeOps.push(...this.keys.saveOps(this.store, height));
    return { stateRoot: this.root, storeOps };
  }

  async setFinal(): Promise<void> {}

  /**
   * Each tx's result, as executeTxs applied it: a key=value tx is written (code
   * 0), anything else skipped (code 1 with the reason). No events, no gas: the
   * machine meters nothing. The state root after the block is the node's to tell.
   */
  async blockResults(_height: bigint, txs: Uint8Array[]): Promise<BlockResults> {
    return {
      txResults: txs.map((tx) => (keyEnd(tx) > 0 ? txResult(0, '') : txResult(1, NOT_KEY_VALUE))),
      events: [],
      validatorUpdates: [],
      appHash: new Uint8Array(0),
    };
  }

  async get(key: string): Promise<Uint8Array | null> {
    return this.store.getRaw(stringKey(Bucket.kvState, key));
  }
}
