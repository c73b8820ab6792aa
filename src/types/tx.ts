import { hash } from 'node:crypto';

/** A tx's sha256 as a latin1 string, one char a byte: the key the mempool's maps and sets hold txs by. */
export type TxId = string;

/**
 * txHash's bytes are views of slabs this size, as Buffer.allocUnsafe pools
 * small buffers: one allocation for 256 digests instead of one each.
 */
const SLAB_BYTES = 8 * 1024;
let slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
let slabUsed = 0;

/**
 * A tx's hash as CometBFT takes it (types/tx.go, Tx.Hash: sha256 of the bytes)
 * as a TxId, computed at each call: whoever has the id passes it on (the
 * mempool hands its ids to the chain, which gives them to the store and its
 * listeners). A WeakMap of every tx's id, kept so each was hashed once, cost
 * more than the hash: its set() was 7.7% of the producer figure's CPU
 * profile (node 20, an ephemeron table of every live tx), twice the sha256's share.
 */
export function txId(tx: Uint8Array): TxId {
  // A latin1 ('binary') string, not a Buffer: crypto.hash's 'buffer' output took three times as long (node 20).
  return hash('sha256', tx, 'binary');
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
