import { hash } from 'node:crypto';

/** A tx's sha256 as a latin1 string, one char a byte: the key the mempool's maps and sets hold txs by. */
export type TxId = string;

/** Ids already taken, by the tx's bytes object: the mempool, the store's indexes and the RPC answer share one. */
const ids = new WeakMap<Uint8Array, TxId>();

/**
 * txHash's bytes are views of slabs this size, as Buffer.allocUnsafe pools
 * small buffers: one allocation for 256 digests instead of one each.
 */
const SLAB_BYTES = 8 * 1024;
let slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
let slabUsed = 0;

/**
 * A tx's hash as CometBFT takes it (types/tx.go, Tx.Hash: sha256 of the bytes)
 * as a TxId, computed once per tx object: the same bytes travel from the RPC
 * through the mempool into the block and its commit, each of which needs the
 * hash. The bytes must not change after the first call.
 */
export function txId(tx: Uint8Array): TxId {
  let id = ids.get(tx);
  if (id === undefined) {
    // A latin1 ('binary') string, not a Buffer: crypto.hash's 'buffer' output took three times as long (node 20).
    id = hash('sha256', tx, 'binary');
    ids.set(tx, id);
  }
  return id;
}

/** txId as 32 bytes, a new view each call (kept with the tx, a view would outlive most callers' use of it). */
export const txHash = (tx: Uint8Array): Buffer => txIdBytes(txId(tx));

/** A TxId's 32 bytes, a new view each call. */
export function txIdBytes(id: TxId): Buffer {
  if (slabUsed + 32 > SLAB_BYTES) {
    slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
    slabUsed = 0;
  }
  slab.write(id, slabUsed, 32, 'latin1');
  return slab.subarray(slabUsed, (slabUsed += 32));
}
