import { hash } from 'node:crypto';

/** Digests already taken, by the tx's bytes object: the mempool, the store's indexes and the RPC answer share one. */
const digests = new WeakMap<Uint8Array, Buffer>();

/**
 * A tx's hash as CometBFT takes it (types/tx.go, Tx.Hash: sha256 of the bytes),
 * computed once per tx object: the same bytes travel from the RPC through the
 * mempool into the block and its commit, each of which needs the hash.
 * The bytes must not change after the first call.
 */
export function txHash(tx: Uint8Array): Buffer {
  let digest = digests.get(tx);
  if (!digest) {
    digest = hash('sha256', tx, 'buffer');
    digests.set(tx, digest);
  }
  return digest;
}
