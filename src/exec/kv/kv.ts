import { createHash } from 'node:crypto';
import { Bucket, MetadataKey, bucketKey, stringKey, type BlockStore, type StoreOp } from '../../store/index.js';
import { TxRejectedError, type ExecResult, type Executor } from '../executor.js';
import type { Mempool } from '../mempool.js';

const MODULUS = 1n << 256n;

/** Most txs and bytes one block takes from the mempool. */
export const MAX_BLOCK_TXS = 10_000;
export const MAX_BLOCK_TX_BYTES = 8 * 1024 * 1024;

function toBigInt(bytes: Uint8Array): bigint {
  return bytes.length === 0 ? 0n : BigInt('0x' + Buffer.from(bytes).toString('hex'));
}

function toBytes32(n: bigint): Uint8Array {
  return Buffer.from(n.toString(16).padStart(64, '0'), 'hex');
}

/** sha256(len(key) ‖ key ‖ value) as a number: one entry's share of the state accumulator. */
function entryHash(key: Uint8Array, value: Uint8Array): bigint {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(key.length);
  return toBigInt(createHash('sha256').update(len).update(key).update(value).digest());
}

/** Splits a `key=value` tx; null when it is not one. */
export function parseKvTx(tx: Uint8Array): { key: Uint8Array; value: Uint8Array } | null {
  const eq = tx.indexOf(0x3d);
  if (eq <= 0) return null;
  return { key: tx.subarray(0, eq), value: tx.subarray(eq + 1) };
}

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
  private accumulator = 0n;

  constructor(
    private readonly store: BlockStore,
    private readonly mempool: Mempool,
    /** Largest total of tx bytes one block takes (a block must fit one DA blob). */
    private readonly maxBlockTxBytes = MAX_BLOCK_TX_BYTES,
  ) {}

  /** Loads the accumulator committed with the last block. */
  async load(): Promise<void> {
    this.accumulator = toBigInt((await this.store.getMetadata(MetadataKey.kvStateRoot)) ?? new Uint8Array(0));
  }

  stateRoot(): Uint8Array {
    return createHash('sha256').update(toBytes32(this.accumulator)).digest();
  }

  async initChain(): Promise<Uint8Array> {
    return this.stateRoot();
  }

  /** Checks a submitted tx and queues it. */
  submitTx(tx: Uint8Array): void {
    if (!parseKvTx(tx)) throw new TxRejectedError('tx must be key=value with a non-empty key', 400);
    this.mempool.add(tx);
  }

  async getTxs(): Promise<Uint8Array[]> {
    return this.mempool.take(MAX_BLOCK_TXS, Math.min(MAX_BLOCK_TX_BYTES, this.maxBlockTxBytes));
  }

  async executeTxs(txs: Uint8Array[], height: bigint, _time: bigint, prevStateRoot: Uint8Array): Promise<ExecResult> {
    if (Buffer.compare(prevStateRoot, this.stateRoot()) !== 0) {
      throw new Error(`state root mismatch at height ${height}: the kv state is not the one the block builds on`);
    }
    // Last write to a key in the block wins; txs that are not key=value are skipped.
    const writes = new Map<string, { key: Uint8Array; value: Uint8Array }>();
    for (const tx of txs) {
      const kv = parseKvTx(tx);
      if (kv) writes.set(Buffer.from(kv.key).toString('latin1'), kv);
    }
    const entries = [...writes.values()];
    const storeKeys = entries.map((e) => bucketKey(Bucket.kvState, e.key));
    const previous = entries.length ? await this.store.getMany(storeKeys) : [];
    let acc = this.accumulator;
    const storeOps: StoreOp[] = [];
    entries.forEach((e, i) => {
      const old = previous[i];
      if (old) acc -= entryHash(e.key, old);
      acc += entryHash(e.key, e.value);
      storeOps.push({ type: 'put', key: storeKeys[i]!, value: e.value });
    });
    acc = ((acc % MODULUS) + MODULUS) % MODULUS;
    this.accumulator = acc;
    storeOps.push(this.store.metadataOp(MetadataKey.kvStateRoot, toBytes32(acc)));
    return { stateRoot: this.stateRoot(), storeOps };
  }

  async setFinal(): Promise<void> {}

  async get(key: string): Promise<Uint8Array | null> {
    return this.store.getRaw(stringKey(Bucket.kvState, key));
  }
}

